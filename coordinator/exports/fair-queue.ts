/**
 * The order the archive worker takes queued archives in (run and calibration exports together):
 * round-robin over accounts, each account's oldest first. An archive's place is the number of its
 * account's archives already being made (here or by another coordinator) plus the number of its
 * account's queued archives older than it; at equal places the account this worker started one
 * for least recently goes first, then the older archive. So while account A has fifteen queued and
 * one being made, account B's only export is next, not sixteenth; and once A's is made, B's still
 * goes before A's next.
 */

/** What the order needs of a queued archive row. */
export interface QueuedArchive {
  id: string;
  account_id: string;
  created: string;
}

/**
 * The rows not `busy` in the order they should be made. `busy(row)`: it is being made (by this
 * coordinator, or leased by another); such rows are left out but count against their account.
 * `lastStarted(account)`: a number that grows with each start (-1: never started here).
 */
export function fairOrder<T>(
  items: readonly T[], rowOf: (item: T) => QueuedArchive, busy: (item: T) => boolean, lastStarted: (accountId: string) => number = () => -1,
): T[] {
  const making = new Map<string, number>();
  const waiting = new Map<string, T[]>();
  for (const item of items) {
    const account = rowOf(item).account_id;
    if (busy(item)) making.set(account, (making.get(account) ?? 0) + 1);
    else if (waiting.has(account)) waiting.get(account)!.push(item);
    else waiting.set(account, [item]);
  }
  const older = (a: QueuedArchive, b: QueuedArchive) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const placed: Array<{ item: T; place: number; last: number }> = [];
  for (const [account, queue] of waiting) {
    queue.sort((a, b) => older(rowOf(a), rowOf(b)));
    const last = lastStarted(account);
    queue.forEach((item, rank) => placed.push({ item, place: (making.get(account) ?? 0) + rank, last }));
  }
  placed.sort((a, b) => a.place - b.place || a.last - b.last || older(rowOf(a.item), rowOf(b.item)));
  return placed.map((p) => p.item);
}

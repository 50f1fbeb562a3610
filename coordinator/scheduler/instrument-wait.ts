/**
 * Why a run's pending episodes wait for instruments: the connected cells that match an episode's pin
 * all lack, or have lost, an instrument kind its task's predicates read. Pure; the scheduler feeds it
 * every pass and shows the sentence as the run's status_detail while it holds.
 */

/** A connected cell matching the pin, with its instruments as reported. */
export interface WaitCell {
  cellId: string;
  /** Kinds the cell configured and opened (its Hello). */
  kinds: readonly string[];
  /** Kinds of `kinds` with no instrument answering now (heartbeat instruments_down). */
  downKinds: readonly string[];
}

/**
 * The sentence naming what is missing, or null when some cell has every kind of `required` now (or
 * no connected cell matches: then the run waits for a cell, not an instrument).
 */
export function instrumentWait(what: { task: string; pin: string; required: readonly string[] }, cells: readonly WaitCell[]): string | null {
  if (cells.length === 0 || what.required.length === 0) return null;
  const gaps = cells.map((cell) => {
    const lacking = what.required.filter((kind) => !cell.kinds.includes(kind));
    const down = what.required.filter((kind) => cell.kinds.includes(kind) && cell.downKinds.includes(kind));
    return { cell, lacking, down };
  });
  if (gaps.some((g) => g.lacking.length === 0 && g.down.length === 0)) return null;
  const missing = [...new Set(gaps.flatMap((g) => [...g.lacking, ...g.down]))].sort();
  const each = gaps.slice(0, 8).map(({ cell, lacking, down }) => [
    ...(lacking.length ? [`${cell.cellId} has no ${lacking.join(" or ")}`] : []),
    ...(down.length ? [`${cell.cellId}'s ${down.join(" and ")} stopped answering`] : []),
  ].join(", "));
  return `waiting for instrument ${missing.join(" and ")}: task ${what.task} reads it, and no connected cell matching ${what.pin} has it now (${each.join("; ")}${gaps.length > 8 ? `; and ${gaps.length - 8} more cells` : ""}); the run goes on when one has`;
}

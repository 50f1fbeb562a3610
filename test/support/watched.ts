/**
 * A list that tests can await: `push` from a callback (a log line, a received message), `until`
 * resolves as soon as the items satisfy a predicate. Nothing polls and nothing sleeps; the test's
 * own timeout is the only deadline.
 */
export class Watched<T> {
  /** Everything pushed since the last `clear()`; the same array for the list's whole life. */
  readonly items: T[] = [];
  private waiters: Array<() => void> = [];

  push(item: T): void {
    this.items.push(item);
    for (const wake of this.waiters.splice(0)) wake();
  }

  clear(): void {
    this.items.length = 0;
  }

  /** Resolves with the items once `predicate` holds for them (at once if it already does). */
  async until(predicate: (items: T[]) => boolean): Promise<T[]> {
    while (!predicate(this.items)) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.items;
  }
}

/**
 * A turn of the event loop: resolves from setImmediate, after the I/O callbacks and timers that were due
 * ran. Long work split by `await nextTurn()` lets other requests in between its steps (an awaited promise
 * alone does not: it resumes before any I/O is looked at).
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Calls `each` on `items` a slice of `perTurn` at a time, in order, with a turn of the event loop between slices: for
 * a pass over a whole run (10,000 episodes) that would hold the loop tens of milliseconds in one piece.
 */
export async function inSlices<T>(items: readonly T[], perTurn: number, each: (slice: readonly T[]) => void): Promise<void> {
  for (let from = 0; from < items.length; from += perTurn) {
    if (from > 0) await nextTurn();
    each(items.slice(from, from + perTurn));
  }
}

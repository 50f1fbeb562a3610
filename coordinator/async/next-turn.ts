/**
 * A turn of the event loop: resolves from setImmediate, after the I/O callbacks and timers that were due
 * ran. Long work split by `await nextTurn()` lets other requests in between its steps (an awaited promise
 * alone does not: it resumes before any I/O is looked at).
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

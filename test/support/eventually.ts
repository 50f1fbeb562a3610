/**
 * Polling with a deadline, for conditions that raise no event the test can await: a row in the
 * coordinator's SQLite file, a file on a cell's disk, the state a child process reports over HTTP.
 * Prefer an event when there is one (a run's end: run-end.ts; a log line or a received message:
 * watched.ts). The deadline is a safety net that names what never happened, not a timing assertion.
 */

export interface EventuallyOptions {
  /** Give up after this long (default 120 s); keep it under the test's timeout so this message wins. */
  deadlineMs?: number;
  /** Pause between probes (default 20 ms). */
  intervalMs?: number;
}

/** Resolves with the first value `probe` returns other than undefined or false. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: EventuallyOptions = {},
): Promise<T> {
  const deadlineMs = options.deadlineMs ?? 120_000;
  const intervalMs = options.intervalMs ?? 20;
  const started = performance.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() - started > deadlineMs) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

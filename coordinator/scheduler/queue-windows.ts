/**
 * Queue windows: the longest a run may wait for its first episode to be assigned, per priority
 * tier (burst 5 min, standard 2 h, soak 24 h by default). A periodic check halts runs past their
 * window with `queue_timeout` (408); a run that got any episode assigned is never timed out.
 */
import { singleFlight } from "../async/single-flight.js";
import type { RunLifecycle } from "../lifecycle/run-lifecycle.js";
import type { Db } from "../store/database.js";
import { listRunsAwaitingFirstEpisode } from "../store/run-queries-repo.js";
import type { Priority } from "../runs/price-list.js";
import type { Logger } from "./scheduler.js";

export type QueueWindowsMs = Record<Priority, number>;

export const DEFAULT_QUEUE_WINDOWS_MS: QueueWindowsMs = { burst: 5 * 60_000, standard: 2 * 3_600_000, soak: 24 * 3_600_000 };
/** How often the windows are checked by default. */
export const DEFAULT_QUEUE_CHECK_INTERVAL_MS = 10_000;

/** What halting overdue runs needs: the store to find them, the lifecycle to stop them. */
export interface QueueWindowContext {
  db: Db;
  lifecycle: Pick<RunLifecycle, "end">;
}

export interface QueueWindowOptions {
  halt: QueueWindowContext;
  windowsMs?: QueueWindowsMs;
  intervalMs?: number;
  now?: () => Date;
  logger?: Logger;
}

function humanMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/** Halts every run past its window now; returns the halted run ids. */
export async function haltOverdueRuns(halt: QueueWindowContext, windowsMs: QueueWindowsMs, now: Date): Promise<string[]> {
  const waiting = await listRunsAwaitingFirstEpisode(halt.db) as Array<{ id: string; priority: Priority; created: string }>;
  const halted: string[] = [];
  for (const run of waiting) {
    const windowMs = windowsMs[run.priority] ?? windowsMs.standard;
    if (now.getTime() - Date.parse(run.created) < windowMs) continue;
    const message = `no cell took the run's first episode within the ${run.priority} tier's queue window of ${humanMs(windowMs)}; resubmit, or use priority "burst"`;
    if (await halt.lifecycle.end(halt.db, run.id, { status: "stopped", code: "queue_timeout", message })) halted.push(run.id);
  }
  return halted;
}

/** Starts the periodic check; returns its stop function. */
export function startQueueWindowWatch(options: QueueWindowOptions): () => Promise<void> {
  const windowsMs = options.windowsMs ?? DEFAULT_QUEUE_WINDOWS_MS;
  for (const [tier, ms] of Object.entries(windowsMs)) {
    if (!(ms > 0)) throw new Error(`queue window of ${tier} must be a positive number of milliseconds; got ${ms}`);
  }
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const check = singleFlight(async () => {
    for (const id of await haltOverdueRuns(options.halt, windowsMs, now())) logger.warn(`queue windows: run ${id} halted with queue_timeout`);
  }, (error) => logger.error(`queue windows: check failed: ${(error as Error).stack ?? error}`));
  const timer = setInterval(() => void check.run(), options.intervalMs ?? DEFAULT_QUEUE_CHECK_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await check.idle();
  };
}

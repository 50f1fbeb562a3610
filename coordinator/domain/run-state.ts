/**
 * The run's states as one transition function: every status change in the coordinator goes
 * through `transitionRun`, which throws on a move the lifecycle does not allow. What a move
 * implies (results, cancellations, events) is coordinator/lifecycle/run-lifecycle.ts.
 *
 *   queued -> scheduling    the scheduler has matched the run to at least one connected cell
 *   scheduling -> running   a cell started the run's first episode
 *   running -> completed    every episode has an outcome and every recording is stored
 *   any open -> failed      the run cannot go on (e.g. its cells refused the policy)
 *   any open -> stopped     a hard stop: e-stop, budget, monthly cap, queue timeout, endpoint timeout
 */
export type RunStatus = "queued" | "scheduling" | "running" | "completed" | "failed" | "stopped";
/** The statuses a run ends in. */
export type TerminalRunStatus = "completed" | "failed" | "stopped";

export const RUN_STATUSES = ["queued", "scheduling", "running", "completed", "failed", "stopped"] as const satisfies readonly RunStatus[];

const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  queued: ["scheduling", "failed", "stopped"],
  scheduling: ["running", "queued", "failed", "stopped"],
  running: ["completed", "failed", "stopped"],
  completed: [],
  failed: [],
  stopped: [],
};

export function isTerminal(status: RunStatus): boolean {
  return ALLOWED[status].length === 0;
}

/** Returns `to` when the move is allowed; throws otherwise (a coordinator bug, never user input). */
export function transitionRun(from: RunStatus, to: RunStatus): RunStatus {
  if (!ALLOWED[from].includes(to)) throw new Error(`illegal run transition ${from} -> ${to}`);
  return to;
}

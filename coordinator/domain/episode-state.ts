/**
 * An episode's states on the coordinator as one transition function:
 *
 *   pending -> assigned     AssignEpisode sent to a cell (attempt + 1)
 *   assigned -> running     the cell reported EpisodeStarted
 *   assigned | running -> pending   the attempt was interrupted (link lost, agent restart, e-stop)
 *   pending | assigned | running -> done   EpisodeFinished (a late finish of an earlier attempt
 *                           may arrive after the episode went back to pending: the first finish wins)
 *   pending -> cancelled    its run ended, or its kind decided early (sequential compare)
 *   cancelled -> done       a cell finished an attempt of a run that was halted meanwhile: the robot
 *                           time was spent, so the outcome is recorded and billed
 *   pending | assigned | running -> unlabelled   EpisodeFinished with outcome "unlabelled": the task's
 *                           success is judged by a person and no label came before the cell's label
 *                           timeout; listed in the result, never counted in n, not run again
 *   done -> pending         a person marked the finished attempt invalid at the operator station
 *                           (scene wrong, hardware fault, person in the cell) while its run still runs:
 *                           it is run again and never counted
 *
 * Late or repeated messages are expected on a fleet: the store decides from the current status
 * whether a message still applies (and does nothing when not); `transitionEpisode` guards the
 * moves it then makes and throws on one this table does not allow, which is a coordinator bug.
 */
export type EpisodeStatus = "pending" | "assigned" | "running" | "done" | "cancelled" | "unlabelled";

export const EPISODE_STATUSES: readonly EpisodeStatus[] = ["pending", "assigned", "running", "done", "cancelled", "unlabelled"];

const ALLOWED: Record<EpisodeStatus, readonly EpisodeStatus[]> = {
  pending: ["assigned", "done", "cancelled", "unlabelled"],
  assigned: ["running", "pending", "done", "unlabelled"],
  running: ["pending", "done", "unlabelled"],
  done: ["pending"],
  cancelled: ["done"],
  unlabelled: [],
};

/** Whether the move is in the table (for callers deciding if a late message still applies). */
export function episodeMoveAllowed(from: EpisodeStatus, to: EpisodeStatus): boolean {
  return ALLOWED[from].includes(to);
}

/** Returns `to` when the move is allowed; throws otherwise (a coordinator bug, never input). */
export function transitionEpisode(from: EpisodeStatus, to: EpisodeStatus): EpisodeStatus {
  if (!episodeMoveAllowed(from, to)) throw new Error(`illegal episode transition ${from} -> ${to}`);
  return to;
}

/** Statuses in which a cell holds the episode. */
export function isHeld(status: EpisodeStatus): boolean {
  return status === "assigned" || status === "running";
}

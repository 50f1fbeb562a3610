/**
 * The failure cluster of an unsuccessful episode, read from its event trace. The rules run in order
 * and the first that matches names the cluster:
 *   collision     a contact spike and no grasp was ever acquired
 *   drop          a grasp was acquired and later lost above the table
 *   missed_grasp  the gripper closed but never acquired a grasp
 *   no_attempt    the gripper never closed
 *   timeout       anything else (the task was attempted but not completed in time)
 * Two clusters are set by the episode runner itself, not read from events: `policy_error` (the
 * policy's reply was unusable) and `safety_limit` (the safety envelope's stop rule ended the episode:
 * the policy kept pushing against it, cell-agent/safety/envelope.ts).
 */
export type FailureCluster = "collision" | "drop" | "missed_grasp" | "no_attempt" | "timeout";

export const FAILURE_CLUSTERS: readonly FailureCluster[] = ["collision", "drop", "missed_grasp", "no_attempt", "timeout"];

/** Clusters the runner sets directly. */
export type RunnerFailureCluster = "policy_error" | "safety_limit";

export function failureClusterOf(events: ReadonlyArray<{ name: string }>): FailureCluster {
  const names = events.map((e) => e.name);
  const firstAcquired = names.indexOf("grasp_acquired");
  const acquired = firstAcquired >= 0;
  if (names.includes("contact_spike") && !acquired) return "collision";
  if (acquired && names.indexOf("grasp_lost", firstAcquired) > firstAcquired) return "drop";
  const closed = names.includes("gripper_closed");
  if (closed && !acquired) return "missed_grasp";
  if (!closed && !acquired) return "no_attempt";
  return "timeout";
}

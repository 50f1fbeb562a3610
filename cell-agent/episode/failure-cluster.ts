/**
 * The failure cluster of an unsuccessful episode, from its event trace, the stages of the task it
 * reached and what ended it: the rules and their names are protocol/failure-clusters.ts (one table,
 * documented in docs/failures.md). A person's failing label is named by the agent (`judged_failure`).
 */
import { deriveFailureCluster, type EpisodeEnding } from "../../protocol/failure-clusters.js";

/**
 * The cluster of a failed episode: `ending` is what stopped it (its time, the policy's error, the
 * safety envelope), `stages` the task monitor's stages in task order.
 */
export function failureClusterOf(
  events: ReadonlyArray<{ name: string }>, stages: Record<string, { reached: boolean }> = {}, ending: EpisodeEnding = "time",
): string {
  return deriveFailureCluster({ ending, events, stages: Object.entries(stages).map(([name, s]) => ({ name, reached: s.reached })) });
}

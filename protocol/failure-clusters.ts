/**
 * The failure clusters: one closed vocabulary, named from what happened in the episode (the event
 * that ended it and the last stage of the task it reached). The cell names an unsuccessful
 * episode's cluster with `deriveFailureCluster` and sends it in EpisodeFinished.failure_cluster;
 * the coordinator stores it, counts it in Result.failure_clusters and filters the episodes list by
 * it. This table is the one source: docs/failures.md lists the same names (a test checks), and
 * names that older cells sent (`drop`) read as their current name (`canonicalFailureCluster`).
 */

/** One entry of the vocabulary. `timeout_after_<stage>` and `idle_after_<stage>` stand for one name per stage of the task. */
export interface FailureClusterDefinition {
  name: string;
  /** Who names it: the cell from its trace, or the coordinator (from the episode's record). */
  namedBy: "cell" | "coordinator";
  definition: string;
}

/** The stage placeholder of the `timeout_after_<stage>` family. */
export const STAGE_PLACEHOLDER = "<stage>";
export const TIMEOUT_AFTER_PREFIX = "timeout_after_";
export const IDLE_AFTER_PREFIX = "idle_after_";

/** The vocabulary, in the order the rules are tried (the first that matches names the cluster). */
export const FAILURE_CLUSTERS: readonly FailureClusterDefinition[] = [
  { name: "policy_error", namedBy: "cell", definition: "The policy's reply was unusable (an error or a malformed action); the episode ended there." },
  { name: "safety_limit", namedBy: "cell", definition: "The safety envelope's stop rule ended the episode: the policy kept commanding past the joint, speed or workspace limits." },
  { name: "judged_failure", namedBy: "cell", definition: "A person (operator.success) or the run's judge said failure while every instrument predicate held; the person's progress and note are on the episode." },
  { name: "collision", namedBy: "cell", definition: "A contact-force spike (|F| > 25 N) before any grasp was acquired." },
  { name: "dropped", namedBy: "cell", definition: "A grasp was acquired and later lost with the object above the table." },
  { name: "missed_grasp", namedBy: "cell", definition: "The gripper closed but never acquired a grasp." },
  { name: "no_attempt", namedBy: "cell", definition: "No stage of the task was reached, the gripper never closed and nothing was grasped before the episode ended (its time ran out or the robot stood idle)." },
  { name: `${TIMEOUT_AFTER_PREFIX}${STAGE_PLACEHOLDER}`, namedBy: "cell", definition: "Time ran out with <stage> the last stage of the task reached (e.g. timeout_after_grasped: held the object, never lifted it) and none of the rules above matched." },
  { name: "timeout", namedBy: "cell", definition: "Time ran out and none of the rules above matched, with no stage reached (or a task without stages)." },
  { name: `${IDLE_AFTER_PREFIX}${STAGE_PLACEHOLDER}`, namedBy: "cell", definition: "The robot stood idle for the plan's idle_end_s (5 s) with the task unfinished, so the episode ended early, with <stage> the last stage reached (e.g. idle_after_grasped: held the object and stopped) and none of the rules above matched." },
  { name: "idle", namedBy: "cell", definition: "The robot stood idle for the plan's idle_end_s with the task unfinished and none of the rules above matched, with no stage reached (or a task without stages)." },
  { name: "intervened", namedBy: "coordinator", definition: "The episode succeeded only with a person's help (interventions allowed): a failure of the policy." },
  { name: "unclassified", namedBy: "coordinator", definition: "A failure its cell gave no cluster for (an older cell, or a label with failing instruments and no cluster)." },
];

/** Names older cells sent -> the current name; episodes recorded with them read (and filter) as the current one. */
export const LEGACY_FAILURE_CLUSTERS: Readonly<Record<string, string>> = { drop: "dropped" };

/**
 * What ended the episode, as the episode runner knows it: its time ran out, the robot stood idle with
 * the task unfinished (the plan's idle_end_s), the policy's reply was unusable, or the envelope stopped it.
 */
export type EpisodeEnding = "time" | "idle" | "policy_error" | "safety_limit";

/** What the derivation reads of an episode. */
export interface FailureTrace {
  ending: EpisodeEnding;
  /** The episode's events in order (gripper_closed, grasp_acquired, grasp_lost, contact_spike, ...). */
  events: ReadonlyArray<{ name: string }>;
  /** The task's stages in task order and whether each was reached. */
  stages: ReadonlyArray<{ name: string; reached: boolean }>;
}

/** A stage name as it appears in a cluster name: lower case, [a-z0-9_], at most 40 characters. */
export function stageSlug(stage: string): string {
  return stage.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 40) || "stage";
}

/** The last stage reached, in task order (stages are reached in order), or null. */
export function lastStageReached(stages: ReadonlyArray<{ name: string; reached: boolean }>): string | null {
  let last: string | null = null;
  for (const stage of stages) if (stage.reached) last = stage.name;
  return last;
}

/** The cluster of an unsuccessful episode (a person's failing label is named by the caller: judged_failure). */
export function deriveFailureCluster(trace: FailureTrace): string {
  if (trace.ending === "policy_error") return "policy_error";
  if (trace.ending === "safety_limit") return "safety_limit";
  const names = trace.events.map((e) => e.name);
  const firstAcquired = names.indexOf("grasp_acquired");
  const acquired = firstAcquired >= 0;
  if (names.includes("contact_spike") && !acquired) return "collision";
  if (acquired && names.indexOf("grasp_lost", firstAcquired) > firstAcquired) return "dropped";
  const closed = names.includes("gripper_closed");
  if (closed && !acquired) return "missed_grasp";
  const last = lastStageReached(trace.stages);
  if (last === null && !closed && !acquired) return "no_attempt";
  if (trace.ending === "idle") return last === null ? "idle" : `${IDLE_AFTER_PREFIX}${stageSlug(last)}`;
  return last === null ? "timeout" : `${TIMEOUT_AFTER_PREFIX}${stageSlug(last)}`;
}

/** A stored or reported cluster name under its current name (legacy names mapped; others as they are). */
export function canonicalFailureCluster(name: string): string;
export function canonicalFailureCluster(name: string | null): string | null;
export function canonicalFailureCluster(name: string | null): string | null {
  return name === null ? null : LEGACY_FAILURE_CLUSTERS[name] ?? name;
}

/** Every stored name that reads as `name` (itself and its legacy names), for filters. */
export function storedNamesOf(name: string): string[] {
  return [name, ...Object.entries(LEGACY_FAILURE_CLUSTERS).filter(([, current]) => current === name).map(([legacy]) => legacy)];
}

/** Whether `name` is in the vocabulary (a `timeout_after_<stage>` or `idle_after_<stage>` of any stage counts). */
export function isKnownFailureCluster(name: string): boolean {
  for (const prefix of [TIMEOUT_AFTER_PREFIX, IDLE_AFTER_PREFIX]) if (name.startsWith(prefix)) return /^[a-z0-9_]{1,40}$/.test(name.slice(prefix.length));
  return FAILURE_CLUSTERS.some((c) => c.name === name);
}

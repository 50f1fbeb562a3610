/**
 * Store rows -> the spec's JSON (the one snake_case boundary for runs, episodes and artifacts).
 * Runs show the request as submitted with defaults filled in; `result` once completed (and the
 * partial result of a stopped run); `status_detail` when failed or stopped, and while an open run
 * waits for something the coordinator can name (an instrument no matching cell has now, recordings its
 * cells have not uploaded): then `waiting_for` says which, so a client need not read the message.
 */
import { lastStageOf } from "../runs/stage-funnel.js";
import { judgeRecordOf } from "../runs/judge-section.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import type { RunViewRecord } from "../store/runs-repo.js";
import { videosByCamera } from "../runs/episode-videos.js";
import { interventionsOfMeta } from "../runs/policy-outcome.js";
import { shownPolicyName } from "../domain/policy-name.js";
import { kindModule } from "../kinds/registry.js";
import type { ArtifactRow } from "../store/artifacts-repo.js";

/** What the views read of an `artifacts` row: the store's row, declared once (store/artifacts-repo.ts). */
export type ArtifactRowView = ArtifactRow;

/** What an open run waits for, as its status_detail shows it: which kind of wait, and the sentence that names it. */
export interface RunWait {
  for: "instrument" | "recordings";
  message: string;
}

export function runView(row: RunViewRecord, live: { waiting?: RunWait } = {}): Record<string, unknown> {
  const request = row.request;
  const showResult = row.result !== null && (row.status === "completed" || row.status === "stopped");
  return {
    id: row.id,
    object: "run",
    kind: row.kind,
    status: row.status,
    // The labels as they are now (POST /v1/runs/{run_id} changes them), not as submitted.
    name: row.name ?? null,
    metadata: row.metadata ?? {},
    created: row.created,
    ...(row.status === "completed" && row.completed ? { completed: row.completed } : {}),
    robot: request.robot,
    environment: request.environment,
    task: request.task,
    policy: request.policy,
    // The name the policy is shown under: as submitted, else its image or hf (kinds without one policy: each unit's).
    ...(request.policy !== undefined ? { policy_name: shownPolicyName(request.policy as Record<string, unknown>, request.policy_name) } : {}),
    episodes: request.episodes,
    priority: row.priority,
    perturbation: request.perturbation ?? null,
    data: request.data,
    max_budget_usd: request.max_budget_usd ?? null,
    interventions: request.interventions,
    publish: request.publish,
    instructions: request.instructions ?? "sampled",
    resolved_pins: row.resolvedPins,
    ...(kindModule(row.kind).traits.hasUnits ? kindFields(row, request) : {}),
    ...(showResult ? { result: row.result } : {}),
    ...((row.status === "failed" || row.status === "stopped") ? { status_detail: { code: row.statusCode, message: row.statusMessage } } : {}),
    ...(live.waiting && OPEN_STATUSES.has(row.status) ? { status_detail: { code: null, message: live.waiting.message, waiting_for: live.waiting.for } } : {}),
  };
}

const OPEN_STATUSES = new Set(["queued", "scheduling", "running"]);

/** Fields every run shows; the rest of a kind's request is shown as submitted by `kindFields`. */
const RUN_FIELDS_SHOWN = new Set([
  "kind", "name", "metadata", "robot", "environment", "task", "policy", "policy_name", "episodes", "priority", "perturbation", "data", "max_budget_usd", "interventions", "publish", "instructions",
]);

/**
 * A multi-unit kind's own request fields as submitted (robots, policies, suite, ...) and its
 * `units` (*added*): `{index, key, robot, environment, task, policy_name?, role?}`; an episode's
 * `unit` is the index.
 */
function kindFields(row: RunViewRecord, request: Record<string, unknown>): Record<string, unknown> {
  const own = Object.fromEntries(Object.entries(request).filter(([key]) => !RUN_FIELDS_SHOWN.has(key)));
  // A sequential compare's exact power at its cap, computed at submission (coordinator/kinds/compare.ts).
  const power = (row.plan.kind?.compare as { sequential_power?: unknown } | undefined)?.sequential_power;
  return {
    ...own,
    ...(power ? { sequential_power: power } : {}),
    units: row.units.map((u, index) => ({
      index, key: u.key, robot: u.robot, environment: u.environment, task: u.task,
      ...(u.policy_name !== undefined ? { policy_name: u.policy_name } : {}),
      ...(u.role !== undefined ? { role: u.role } : {}),
    })),
  };
}

/** URL of a stored artifact file: `<artifactUrl>/runs/<run_id>/episodes/<episode_id>/<file_name>`. */
export function artifactFileUrl(artifactUrl: string, a: Pick<ArtifactRowView, "run_id" | "episode_id" | "file_name">): string {
  return `${artifactUrl}/runs/${encodeURIComponent(a.run_id)}/episodes/${encodeURIComponent(a.episode_id)}/${encodeURIComponent(a.file_name)}`;
}

/**
 * An Episode; `artifacts` are the episode's rows (any kinds). URLs are null until the agent
 * announced the file (thumbnail_url and series_url, given `baseUrl`, until its recording is stored).
 * `withUnit`: show the episode's unit (runs of several units).
 */
export function episodeView(episode: EpisodeRecord, artifacts: readonly ArtifactRowView[], artifactUrl: string, withUnit: boolean, baseUrl?: string): Record<string, unknown> {
  const urlOf = (kind: string) => {
    const a = artifacts.find((x) => x.episode_id === episode.id && x.kind === kind);
    return a ? artifactFileUrl(artifactUrl, a) : null;
  };
  // The still and the series are read from the stored recording: their URLs appear once it is stored.
  const recorded = artifacts.some((x) => x.episode_id === episode.id && x.kind === "mcap" && x.status === "stored");
  const mediaUrl = (what: string) => (recorded && baseUrl !== undefined
    ? `${baseUrl}/v1/runs/${encodeURIComponent(episode.runId)}/episodes/${encodeURIComponent(episode.id)}/${what}` : null);
  const interventions = interventionsOfMeta(episode.meta);
  const judge = judgeRecordOf(episode);
  return {
    id: episode.id,
    object: "episode",
    index: episode.idx,
    outcome: episode.outcome,
    duration_s: episode.durationS,
    video_url: urlOf("video"),
    videos: Object.fromEntries([...videosByCamera(artifacts.filter((a) => a.episode_id === episode.id), episode.meta)].map(([camera, a]) => [camera, artifactFileUrl(artifactUrl, a)])),
    mcap_url: urlOf("mcap"),
    ...(baseUrl !== undefined ? { thumbnail_url: mediaUrl("thumbnail"), series_url: mediaUrl("series") } : {}),
    replay_spec: episode.replaySpec,
    failure_cluster: episode.failureCluster,
    last_stage: lastStageOf(episode.evaluation),
    cell: episode.cellId,
    attempts: episode.attempt,
    interruptions: episode.interruptions,
    // Only episodes a person judged carry their label (operator.success), so clients can filter on it.
    ...(episode.label?.judgedBy === "human" ? { judged_by: "human", label: { progress: episode.label.progress, note: episode.label.note, waited_s: episode.label.waitedS } } : {}),
    ...(episode.label?.judgedBy === "judge" ? { judged_by: "judge" } : {}),
    ...(judge ? { judge: { success: judge.success, confidence: judge.confidence, error: judge.error, audit: judge.audit, low_confidence: judge.lowConfidence } } : {}),
    // Only intervened episodes carry the flag (and their interventions), so clients can filter on it.
    ...(interventions.length > 0 ? { intervened: true, interventions } : {}),
    ...(withUnit ? { unit: episode.unit } : {}),
    // A compare's pair: both episodes of pair i share the seed (the same initial conditions).
    ...(typeof episode.assign.pair === "number" ? { pair: episode.assign.pair } : {}),
  };
}

/** One artifact of a run as listed by GET /v1/runs/{id}/episodes?artifact=<kind>. */
export function artifactView(a: ArtifactRowView, index: number, artifactUrl: string): Record<string, unknown> {
  return {
    object: "artifact",
    episode_id: a.episode_id,
    index,
    kind: a.kind,
    url: a.status === "stored" ? artifactFileUrl(artifactUrl, a) : null,
    bytes: a.bytes,
    sha256: a.sha256,
    status: a.status,
    ...(a.status === "pending" && a.missing_since ? { missing_since: a.missing_since } : {}),
  };
}

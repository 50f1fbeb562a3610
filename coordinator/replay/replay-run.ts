/**
 * Replay of one finished episode: a new run of kind `run` whose every episode carries the original
 * episode's seed and replay spec. The cell reproduces the spec's initial conditions exactly
 * (cell-agent/episode/plan.ts replayPlan) instead of drawing them from the seed; the scheduler sends
 * the spec as AssignEpisode.replay_spec_json from the run plan's `replay_spec`.
 */
import { AssayError } from "../errors/assay-error.js";
import { q } from "../runs/field-checks.js";
import type { ValidatedRun } from "../runs/run-request.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import type { NewEpisode, RunPlan, RunRecord } from "../store/runs-repo.js";
import { kindModule } from "../kinds/registry.js";

/** At most this many copies of one episode per replay request. */
export const REPLAY_COUNT_MAX = 100;

/** A replay body as coordinator/api/schemas/runs.ts `ReplayRequest` checked it. */
export interface ReplayRequest {
  /** The policy to replay with; default the original run's policy. */
  policy?: Record<string, unknown>;
  /** Copies of the episode to run (default 1). */
  count?: number;
}

/** The replay spec of a finished episode, or 422 naming what to wait for. */
export function replaySpecOf(episode: EpisodeRecord): Record<string, unknown> {
  if (!episode.replaySpec) {
    throw new AssayError("contract_validation_failed", `episode ${episode.id} has no replay_spec yet (status ${episode.status}); replay it once it has finished`, { runId: episode.runId });
  }
  return episode.replaySpec;
}

/**
 * The body of the replay run, as a POST /v1/runs body: the original request pinned to the original
 * run's resolved robot, environment and task (so `@latest` cannot move), with the chosen policy and
 * `count` episodes. Validating it applies every check a new run gets.
 */
export function replayRunBody(original: RunRecord, request: ReplayRequest): Record<string, unknown> {
  const submitted = original.request;
  if (!kindModule(original.kind).traits.replayable) {
    throw new AssayError("contract_validation_failed", `only episodes of kind "run" runs can be replayed this way; run ${original.id} is of kind ${q(original.kind)}`, { runId: original.id });
  }
  const pins = original.resolvedPins;
  const { idempotency_key: _ignored, ...body } = submitted;
  return { ...body, kind: "run", robot: pins.robot, environment: pins.environment, task: pins.task, episodes: request.count ?? 1, policy: request.policy ?? submitted.policy };
}

/**
 * Plan and episodes of the replay run: every episode has the original seed and replay spec, and ends
 * by the original's rules (its plan's idle end, or none for a run planned before the idle end existed).
 */
export function replayRunShape(validated: ValidatedRun, original: Pick<RunRecord, "plan">, episode: EpisodeRecord, replaySpec: Record<string, unknown>, count: number): { plan: RunPlan; episodes: NewEpisode[] } {
  const { idle_end_s: _new, ...rest } = validated.plan;
  const plan: RunPlan = {
    ...rest,
    ...(original.plan.idle_end_s !== undefined ? { idle_end_s: original.plan.idle_end_s } : {}),
    replay_spec: replaySpec, replay_of: { run_id: episode.runId, episode_id: episode.id },
  };
  const episodes = Array.from({ length: count }, () => ({ unit: 0, seed: episode.seed, assign: { replay_spec: replaySpec } }));
  return { plan, episodes };
}

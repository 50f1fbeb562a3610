/**
 * Interventions as results and reports show them (what counts as intervened, and why an
 * intervened episode is a failure of the policy: coordinator/runs/policy-outcome.ts).
 *
 * Result.interventions (*added*; the spec says counts and timestamps ship in results and that
 * intervened episodes are flagged in the statistics):
 *   `{mode, count, episodes_intervened, assisted_successes, timestamps: [{episode, index, unit?,
 *   t_s, kind}]}` over every finished episode of the run. The Result's n, success_rate and ci95
 *   count an intervened episode as a failure; its `assisted` rate counts the helped successes.
 */
import { inSlices } from "../async/next-turn.js";
import { assistedSuccess, interventionsOfMeta, isIntervened } from "./policy-outcome.js";

export interface InterventionSummary {
  mode: string;
  count: number;
  episodes_intervened: number;
  /** Episodes that succeeded only with help: failures of the policy, successes in `assisted`. */
  assisted_successes: number;
  timestamps: Array<{ episode: string; index: number; unit?: number; t_s: number | null; kind: string; by?: string }>;
}

/** What this module reads of an episode. */
export interface InterventionEpisode {
  id: string;
  idx: number;
  unit: number;
  outcome: string | null;
  /** The episode's end /meta, parsed. */
  meta: Record<string, unknown> | null;
}

/**
 * The run's interventions section over its finished (`done`) episodes; `mode` as the run declared
 * it. `withUnits`: name each timestamp's unit (runs of several units; kind `run` has one).
 */
export function interventionSummary(mode: string, done: readonly InterventionEpisode[], withUnits: boolean): InterventionSummary {
  const timestamps = done.flatMap((e) => interventionsOfMeta(e.meta).map((i) => ({
    episode: e.id, index: e.idx, ...(withUnits ? { unit: e.unit } : {}), t_s: i.t_s, kind: i.kind, ...(i.by ? { by: i.by } : {}),
  })));
  return {
    mode,
    count: timestamps.length,
    episodes_intervened: new Set(timestamps.map((t) => t.episode)).size,
    assisted_successes: done.filter(assistedSuccess).length,
    timestamps,
  };
}

/** Episodes interventionSummaryInTurns reads in one turn of the event loop. */
const EPISODES_PER_TURN = 1000;

/**
 * interventionSummary over a run's episodes (any status: the finished ones are picked out), with a turn of the event
 * loop after every EPISODES_PER_TURN: only intervened episodes add to the summary (every timestamp is one of theirs,
 * every assisted success is one), so they are picked out a slice at a time and summed alone.
 */
export async function interventionSummaryInTurns(mode: string, episodes: readonly (InterventionEpisode & { status: string })[], withUnits: boolean): Promise<InterventionSummary> {
  const intervened: InterventionEpisode[] = [];
  await inSlices(episodes, EPISODES_PER_TURN, (slice) => {
    for (const e of slice) if (e.status === "done" && isIntervened(e)) intervened.push(e);
  });
  return interventionSummary(mode, intervened, withUnits);
}

/** The run's declared mode from its request ("none" when absent). */
export function interventionModeOf(request: Record<string, unknown>): string {
  return typeof request.interventions === "string" ? request.interventions : "none";
}

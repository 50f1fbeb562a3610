/**
 * Interventions as results and reports show them. A cell records each hand in the scene in the
 * episode's end `/meta` as `interventions: [{t_s, kind, detail, duration_s}]` (kind `on_stall` or
 * `scripted`, t_s in episode seconds); an episode with at least one is *intervened*.
 *
 * Result.interventions (*added*; the spec says counts and timestamps ship in results and that
 * intervened episodes are flagged in the statistics):
 *   `{mode, count, episodes_intervened, timestamps: [{episode, index, unit?, t_s, kind}], clean,
 *   intervened}` where `clean` and `intervened` are the rate `{n, success_rate, ci95,
 *   interval_method}` over the finished episodes without and with an intervention. The headline
 *   rate still counts every finished episode; `clean` is the one to cite for an unassisted policy.
 */
import { wilsonInterval } from "../stats/wilson.js";
import type { RateSummary } from "./result-summary.js";

/** One intervention of an episode's /meta. */
export interface EpisodeIntervention {
  t_s: number | null;
  kind: string;
  detail?: string;
}

export interface InterventionSummary {
  mode: string;
  count: number;
  episodes_intervened: number;
  timestamps: Array<{ episode: string; index: number; unit?: number; t_s: number | null; kind: string }>;
  clean: RateSummary;
  intervened: RateSummary;
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

/** The interventions an episode's /meta lists; [] when none or unreadable. */
export function interventionsOfMeta(meta: Record<string, unknown> | null): EpisodeIntervention[] {
  const list = meta?.interventions;
  if (!Array.isArray(list)) return [];
  return list.map((x: { t_s?: unknown; kind?: unknown; detail?: unknown }) => ({
    t_s: typeof x?.t_s === "number" ? x.t_s : null,
    kind: typeof x?.kind === "string" ? x.kind : "unspecified",
    ...(typeof x?.detail === "string" ? { detail: x.detail } : {}),
  }));
}

function rate(episodes: readonly InterventionEpisode[]): RateSummary {
  const k = episodes.filter((e) => e.outcome === "success").length;
  const n = episodes.length;
  return { n, success_rate: n === 0 ? 0 : k / n, ci95: wilsonInterval(k, n, 0.95), interval_method: "wilson" };
}

/**
 * The run's interventions section over its finished (`done`) episodes; `mode` as the run declared
 * it. `withUnits`: name each timestamp's unit (runs of several units; kind `run` has one).
 */
export function interventionSummary(mode: string, done: readonly InterventionEpisode[], withUnits: boolean): InterventionSummary {
  const timestamps = done.flatMap((e) => interventionsOfMeta(e.meta).map((i) => ({
    episode: e.id, index: e.idx, ...(withUnits ? { unit: e.unit } : {}), t_s: i.t_s, kind: i.kind,
  })));
  const flagged = new Set(timestamps.map((t) => t.episode));
  return {
    mode,
    count: timestamps.length,
    episodes_intervened: flagged.size,
    timestamps,
    clean: rate(done.filter((e) => !flagged.has(e.id))),
    intervened: rate(done.filter((e) => flagged.has(e.id))),
  };
}

/** The run's declared mode from its request ("none" when absent). */
export function interventionModeOf(request: Record<string, unknown>): string {
  return typeof request.interventions === "string" ? request.interventions : "none";
}

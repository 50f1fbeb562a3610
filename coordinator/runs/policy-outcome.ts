/**
 * What an episode says about the policy. A cell records each hand in the scene in the episode's
 * end `/meta` as `interventions: [{t_s, kind, detail, duration_s}]` (kind `on_stall` or
 * `scripted`, t_s in episode seconds; a person's also `by: "operator"`, `offered_t_s`, `end_t_s`,
 * `waited_s`, `started_at`, `ended_at`); an episode with at least one is *intervened*.
 *
 * Every rate and decision Assay reports (a Result's n, success_rate and ci95, per-unit and
 * per-cell rates, threshold verdicts, compare and transfer pairs, matrix and gate regressions,
 * sim-to-real agreement) uses the *unassisted* outcome: an episode succeeds for the policy only
 * when it succeeded and nobody helped. Counting an assisted success as a success overstates the
 * policy; leaving intervened episodes out (the old `clean` rate) conditions on "did not stall" and
 * overstates it too. Example: 20% stall, 90% of the others succeed, half of the assisted ones do:
 * unassisted 0.72, assisted-counted 0.82, without the intervened 0.90. The assisted rate is
 * reported beside the headline as `assisted`. A leaf: imports nothing.
 */

/** One intervention of an episode's /meta. */
export interface EpisodeIntervention {
  t_s: number | null;
  kind: string;
  detail?: string;
  /** "operator" when a person at the operator station helped (absent: the simulator's own nudge). */
  by?: string;
  /** A person's intervention: episode seconds when it was offered and when they pressed Done, and wall times. */
  offered_t_s?: number;
  end_t_s?: number;
  duration_s?: number;
  waited_s?: number;
  started_at?: string;
  ended_at?: string;
}

const NUMBER_FIELDS = ["offered_t_s", "end_t_s", "duration_s", "waited_s"] as const;
const TEXT_FIELDS = ["by", "started_at", "ended_at"] as const;

/** What this module reads of an episode. */
export interface OutcomeEpisode {
  outcome: string | null;
  /** The episode's end /meta, parsed. */
  meta: Record<string, unknown> | null;
}

/** The interventions an episode's /meta lists; [] when none or unreadable. */
export function interventionsOfMeta(meta: Record<string, unknown> | null): EpisodeIntervention[] {
  const list = meta?.interventions;
  if (!Array.isArray(list)) return [];
  return list.map((x: Record<string, unknown>) => ({
    t_s: typeof x?.t_s === "number" ? x.t_s : null,
    kind: typeof x?.kind === "string" ? x.kind : "unspecified",
    ...(typeof x?.detail === "string" ? { detail: x.detail } : {}),
    ...Object.fromEntries(NUMBER_FIELDS.flatMap((k) => (typeof x?.[k] === "number" ? [[k, x[k]]] : []))),
    ...Object.fromEntries(TEXT_FIELDS.flatMap((k) => (typeof x?.[k] === "string" ? [[k, (x[k] as string).slice(0, 100)]] : []))),
  }));
}

/**
 * Whether a human helped in the episode: /meta lists at least one intervention (interventionsOfMeta's list is never
 * shorter or longer than /meta's). Counted for every episode in every rate, so it reads the length and builds nothing.
 */
export function isIntervened(episode: Pick<OutcomeEpisode, "meta">): boolean {
  const list = episode.meta?.interventions;
  return Array.isArray(list) && list.length > 0;
}

/** The policy's outcome: success only without help. Every rate and decision counts this. */
export function policySucceeded(episode: OutcomeEpisode): boolean {
  return episode.outcome === "success" && !isIntervened(episode);
}

/** A success a human helped: counted in `assisted`, a failure of the policy everywhere else. */
export function assistedSuccess(episode: OutcomeEpisode): boolean {
  return episode.outcome === "success" && isIntervened(episode);
}

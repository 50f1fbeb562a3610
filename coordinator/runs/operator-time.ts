/**
 * The people behind a run on real cells: the time they spent setting scenes (operator resets), judging
 * episodes (labels) and helping paused episodes (interventions), and the episodes they marked invalid.
 * A leaf the run lifecycle adds to every Result, the report reads (`operatorActivities`: the one place
 * operator time is computed) and usage reads.
 *
 * - operatorActivities: per activity how many, seconds in all, mean each, per episode counted in n.
 *   Reset: every attempt whose reset waited for a person, from `awaiting_reset` to the answer (the
 *   person's walk to the cell included). Label: every episode a person was asked to judge, from
 *   `awaiting_label` to the label or the timeout. Intervention: every intervention a person performed
 *   (`by: "operator"` in the finished episode's end /meta), from the offer to Done: `waited_s` (offer to
 *   Intervene, the walk to the cell) plus `ended_at - started_at` (Intervene to Done), both wall clock.
 *   An offer nobody took and the simulator's own nudges (no `by`) took no person's time.
 * - operator_time (present once any reset needed a person): `resets` counts the attempts whose reset
 *   waited for a person (finished, interrupted and invalidated attempts alike: the person's time was
 *   spent), each from the cell's `awaiting_reset` until the wait ended (confirmed, or the attempt
 *   aborted); `reset_s_total` their seconds; `reset_s_mean` per such reset; `reset_s_per_episode` the
 *   total over the episodes counted in n, the figure a lab plans staff with.
 * - invalidated (present once any episode was marked invalid): each invalid attempt with its reason.
 */
import { inSlices } from "../async/next-turn.js";
import type { InvalidReason } from "../domain/invalid-reasons.js";
import { interventionsOfMeta, isIntervened, type EpisodeIntervention } from "./policy-outcome.js";
import { studentTQuantile } from "../stats/student-t.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { judgeRecordOf, judgeSection, type JudgeSection } from "./judge-section.js";

/** One activity of people behind a run: how many, seconds in all, mean each, per episode counted in n (0.1 s). */
export interface OperatorActivity {
  count: number;
  s_total: number;
  s_mean: number;
  s_per_episode: number;
}

/** A run's operator activities (the Report's `operator_time`; the Result's reads `reset`). */
export interface OperatorActivities {
  /** Episodes counted in n, the denominator of the per-episode figures. */
  episodes: number;
  reset: OperatorActivity;
  label: OperatorActivity;
  intervention: OperatorActivity;
  /** All three together. */
  s_total: number;
  s_per_episode: number;
}

/** The Result's operator_time: resets only (its shape predates labels and interventions). */
export interface OperatorTime {
  resets: number;
  reset_s_total: number;
  reset_s_mean: number;
  reset_s_per_episode: number;
}

/** Who decided the outcomes counted in n, and a person's progress scores. */
export interface Labels {
  /**
   * "human" when every counted episode's outcome was a person's label, "judge" when every one was a judge endpoint's
   * verdict, "instrument" when none was either, "mixed" otherwise.
   */
  judged_by: "instrument" | "human" | "judge" | "mixed";
  labelled: number;
  /** Counted episodes whose outcome a judge endpoint's verdict decided alone (present with a judge). */
  judged?: number;
  /** The judge endpoint's verdicts and its agreement with people on the audit sample (judge-section.ts). */
  judge?: JudgeSection;
  /** Mean 0-100 progress score over labelled episodes that have one, with a 95% Student t interval (null below 2 scores). */
  progress: { n: number; mean: number; ci95: [number, number] | null } | null;
  label_s_total: number;
  label_s_per_episode: number;
  /** Episodes no person labelled before the cell's label timeout: never counted in n. */
  unlabelled: Array<{ episode_id: string; index: number; cell: string | null; waited_s: number | null; finished_at: string | null }>;
}

/** Mean of 0-100 scores with a two-sided 95% Student t interval on n - 1 degrees of freedom, clipped to [0, 100]. */
export function progressInterval(scores: readonly number[]): { n: number; mean: number; ci95: [number, number] | null } | null {
  if (scores.length === 0) return null;
  const n = scores.length;
  const mean = scores.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { n, mean: round1(mean), ci95: null };
  const sd = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  const half = studentTQuantile(0.975, n - 1) * sd / Math.sqrt(n);
  return { n, mean: round1(mean), ci95: [round1(Math.max(0, mean - half)), round1(Math.min(100, mean + half))] };
}

export interface InvalidatedAttempt {
  episode_id: string;
  index: number;
  attempt: number;
  cell: string | null;
  reason: InvalidReason;
  note: string | null;
  outcome: "success" | "failure" | null;
  at: string;
}

const round1 = (s: number): number => Math.round(s * 10) / 10;

/** Seconds of each operator reset over these episodes' attempts (finished and not). */
export function operatorResetSeconds(episodes: ReadonlyArray<Pick<EpisodeRecord, "status" | "operatorResetS" | "interruptions">>): number[] {
  const seconds: number[] = [];
  for (const e of episodes) {
    if ((e.status === "done" || e.status === "unlabelled") && e.operatorResetS) seconds.push(e.operatorResetS);
    for (const i of e.interruptions) if (i.operator_reset_s) seconds.push(i.operator_reset_s);
  }
  return seconds;
}

/** Seconds of each label wait over these episodes (finished and unlabelled; an episode nobody was asked to judge has none). */
export function operatorLabelWaits(episodes: ReadonlyArray<Pick<EpisodeRecord, "status" | "label">>): number[] {
  return episodes.flatMap((e) => ((e.status === "done" || e.status === "unlabelled") && e.label?.waitedS != null ? [e.label.waitedS] : []));
}

/**
 * A person's seconds on one intervention: from the offer to Done (`waited_s` plus Intervene to Done by
 * the wall clock; `duration_s`, the episode's seconds, when the wall times are missing). Null when no
 * person performed it (the simulator's own nudge has no `by`).
 */
export function interventionPersonSeconds(i: EpisodeIntervention): number | null {
  if (i.by !== "operator") return null;
  const started = Date.parse(i.started_at ?? "");
  const ended = Date.parse(i.ended_at ?? "");
  const heldS = Number.isFinite(started) && Number.isFinite(ended) && ended >= started ? (ended - started) / 1000 : i.duration_s ?? 0;
  return Math.max(0, i.waited_s ?? 0) + Math.max(0, heldS);
}

/** Seconds of each intervention a person performed in these finished episodes (their end /meta). */
export function operatorInterventionSeconds(episodes: ReadonlyArray<Pick<EpisodeRecord, "status" | "meta">>): number[] {
  return episodes.flatMap((e) => ((e.status === "done" || e.status === "unlabelled")
    ? interventionsOfMeta(e.meta).flatMap((i) => {
      const s = interventionPersonSeconds(i);
      return s === null ? [] : [s];
    })
    : []));
}

function activity(seconds: readonly number[], counted: number): OperatorActivity {
  const total = seconds.reduce((sum, s) => sum + s, 0);
  return {
    count: seconds.length,
    s_total: round1(total),
    s_mean: seconds.length === 0 ? 0 : round1(total / seconds.length),
    s_per_episode: counted === 0 ? 0 : round1(total / counted),
  };
}

/** Episodes counted in n (finished). */
function countedOf(episodes: readonly EpisodeRecord[]): number {
  let counted = 0;
  for (const e of episodes) if (e.status === "done") counted++;
  return counted;
}

/**
 * Resets, labels and interventions over a run's episodes; every count 0 when no person was involved.
 * `counted`: the run's episodes counted in n, when `episodes` are only those a person was involved in.
 */
export function operatorActivities(episodes: readonly EpisodeRecord[], counted = countedOf(episodes)): OperatorActivities {
  const resets = operatorResetSeconds(episodes);
  const labels = operatorLabelWaits(episodes);
  const interventions = operatorInterventionSeconds(episodes);
  const total = [...resets, ...labels, ...interventions].reduce((sum, s) => sum + s, 0);
  return {
    episodes: counted,
    reset: activity(resets, counted),
    label: activity(labels, counted),
    intervention: activity(interventions, counted),
    s_total: round1(total),
    s_per_episode: counted === 0 ? 0 : round1(total / counted),
  };
}

/** Seconds cells waited for a person's success label over these episodes (labelled and unlabelled alike). */
export function operatorLabelSeconds(episodes: ReadonlyArray<Pick<EpisodeRecord, "status" | "label">>): number {
  return operatorLabelWaits(episodes).reduce((sum, s) => sum + s, 0);
}

/** The Result's operator sections; empty when no person was involved. `counted` as operatorActivities takes it. */
export function operatorSections(episodes: readonly EpisodeRecord[], counted = countedOf(episodes)): { operator_time?: OperatorTime; invalidated?: InvalidatedAttempt[]; labels?: Labels } {
  const { reset } = operatorActivities(episodes, counted);
  const invalidated = episodes.flatMap((e) => e.interruptions.flatMap((i) => (i.invalidated
    ? [{ episode_id: e.id, index: e.idx, attempt: i.attempt, cell: i.cell, reason: i.invalidated.reason, note: i.invalidated.note, outcome: i.invalidated.outcome, at: i.at }]
    : [])));
  invalidated.sort((a, b) => a.at.localeCompare(b.at) || a.index - b.index);
  return {
    ...(reset.count > 0
      ? { operator_time: { resets: reset.count, reset_s_total: reset.s_total, reset_s_mean: reset.s_mean, reset_s_per_episode: reset.s_per_episode } }
      : {}),
    ...(invalidated.length > 0 ? { invalidated } : {}),
    ...labelSection(episodes, counted),
  };
}

/**
 * Whether any section above reads more of the episode than that it counts in n: a person's reset, a label (asked
 * for, given or timed out), an interrupted or invalidated attempt, an intervention, a judge's verdict. The others
 * add only to `counted`.
 */
function involvesPerson(e: EpisodeRecord): boolean {
  return e.status === "unlabelled" || Boolean(e.operatorResetS) || e.label != null || e.interruptions.length > 0 || isIntervened(e)
    || judgeRecordOf(e) !== null;
}

/** Episodes operatorSectionsInTurns reads in one turn of the event loop. */
const SECTION_EPISODES_PER_TURN = 1000;

/**
 * operatorSections over a whole run, with a turn of the event loop after every SECTION_EPISODES_PER_TURN episodes
 * (a 10,000-episode run's sections in one piece held the coordinator's loop ~20 ms): the episodes a person was
 * involved in are picked out a slice at a time, and the sections computed over them alone, with the run's count.
 */
export async function operatorSectionsInTurns(episodes: readonly EpisodeRecord[]): Promise<ReturnType<typeof operatorSections>> {
  const involved: EpisodeRecord[] = [];
  let counted = 0;
  await inSlices(episodes, SECTION_EPISODES_PER_TURN, (slice) => {
    for (const e of slice) {
      if (e.status === "done") counted++;
      if (involvesPerson(e)) involved.push(e);
    }
  });
  return operatorSections(involved, counted);
}

/** The labels section, present once a person was asked to judge any episode. */
function labelSection(episodes: readonly EpisodeRecord[], counted: number): { labels?: Labels } {
  const labelled = episodes.filter((e) => e.status === "done" && e.label?.judgedBy === "human");
  const byJudge = episodes.filter((e) => e.status === "done" && e.label?.judgedBy === "judge").length;
  const unlabelled = episodes.filter((e) => e.status === "unlabelled");
  const judge = judgeSection(episodes);
  if (labelled.length === 0 && unlabelled.length === 0 && !judge) return {};
  const waited = operatorLabelSeconds([...labelled, ...unlabelled]);
  const scores = labelled.flatMap((e) => (e.label?.progress != null ? [e.label.progress] : []));
  return {
    labels: {
      judged_by: labelled.length === counted ? "human" : byJudge === counted ? "judge"
        : labelled.length === 0 && byJudge === 0 ? "instrument" : "mixed",
      labelled: labelled.length,
      ...(judge ? { judged: byJudge, judge } : {}),
      progress: progressInterval(scores),
      label_s_total: round1(waited),
      label_s_per_episode: counted === 0 ? 0 : round1(waited / counted),
      unlabelled: unlabelled.map((e) => ({ episode_id: e.id, index: e.idx, cell: e.cellId, waited_s: e.label?.waitedS ?? null, finished_at: e.finishedAt })),
    },
  };
}

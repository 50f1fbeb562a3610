/**
 * The people behind a run on real cells: the time they spent setting scenes (operator resets) and the
 * episodes they marked invalid. A leaf the run lifecycle adds to every Result and usage reads.
 *
 * - operator_time (present once any reset needed a person): `resets` counts the attempts whose reset
 *   waited for a person (finished, interrupted and invalidated attempts alike: the person's time was
 *   spent), each from the cell's `awaiting_reset` until the wait ended (confirmed, or the attempt
 *   aborted); `reset_s_total` their seconds; `reset_s_mean` per such reset; `reset_s_per_episode` the
 *   total over the episodes counted in n, the figure a lab plans staff with.
 * - invalidated (present once any episode was marked invalid): each invalid attempt with its reason.
 */
import type { InvalidReason } from "../domain/invalid-reasons.js";
import { studentTQuantile } from "../stats/student-t.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { judgeSection, type JudgeSection } from "./judge-section.js";

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

/** Seconds cells waited for a person's success label over these episodes (labelled and unlabelled alike). */
export function operatorLabelSeconds(episodes: ReadonlyArray<Pick<EpisodeRecord, "status" | "label">>): number {
  return episodes.reduce((sum, e) => sum + ((e.status === "done" || e.status === "unlabelled") ? e.label?.waitedS ?? 0 : 0), 0);
}

/** The Result's operator sections; empty when no person was involved. */
export function operatorSections(episodes: readonly EpisodeRecord[]): { operator_time?: OperatorTime; invalidated?: InvalidatedAttempt[]; labels?: Labels } {
  const seconds = operatorResetSeconds(episodes);
  const total = seconds.reduce((sum, s) => sum + s, 0);
  const counted = episodes.filter((e) => e.status === "done").length;
  const invalidated = episodes.flatMap((e) => e.interruptions.flatMap((i) => (i.invalidated
    ? [{ episode_id: e.id, index: e.idx, attempt: i.attempt, cell: i.cell, reason: i.invalidated.reason, note: i.invalidated.note, outcome: i.invalidated.outcome, at: i.at }]
    : [])));
  invalidated.sort((a, b) => a.at.localeCompare(b.at) || a.index - b.index);
  return {
    ...(seconds.length > 0
      ? { operator_time: { resets: seconds.length, reset_s_total: round1(total), reset_s_mean: round1(total / seconds.length), reset_s_per_episode: counted === 0 ? 0 : round1(total / counted) } }
      : {}),
    ...(invalidated.length > 0 ? { invalidated } : {}),
    ...labelSection(episodes, counted),
  };
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

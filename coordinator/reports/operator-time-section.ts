/**
 * The report's `operator_time` (issue 26 item 6): the people's time behind a run on real cells, the
 * figure a lab plans staff with. Resets: every attempt whose reset waited for a person (finished,
 * interrupted and invalidated alike: the time was spent), from `awaiting_reset` to the answer.
 * Labelling: every episode a person was asked to judge (labelled or unlabelled), from `awaiting_label`
 * to the label or the timeout. Per activity: how many, total seconds, mean per occurrence, and seconds
 * per episode counted in n; then both together per counted episode. Absent when no person was involved.
 */
import { operatorResetSeconds } from "../runs/operator-time.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

export interface OperatorActivity {
  count: number;
  s_total: number;
  s_mean: number;
  s_per_episode: number;
}

export interface OperatorTimeSection {
  /** Episodes counted in n, the denominator of the per-episode figures. */
  episodes: number;
  reset: OperatorActivity;
  label: OperatorActivity;
  s_total: number;
  s_per_episode: number;
}

const round1 = (s: number): number => Math.round(s * 10) / 10;

function activity(seconds: readonly number[], counted: number): OperatorActivity {
  const total = seconds.reduce((sum, s) => sum + s, 0);
  return {
    count: seconds.length,
    s_total: round1(total),
    s_mean: seconds.length === 0 ? 0 : round1(total / seconds.length),
    s_per_episode: counted === 0 ? 0 : round1(total / counted),
  };
}

/** The section over a run's episodes, or undefined when no reset or label waited for a person. */
export function operatorTimeSection(episodes: readonly EpisodeRecord[]): OperatorTimeSection | undefined {
  const resets = operatorResetSeconds(episodes);
  const labels = episodes.flatMap((e) => ((e.status === "done" || e.status === "unlabelled") && e.label?.waitedS != null ? [e.label.waitedS] : []));
  if (resets.length === 0 && labels.length === 0) return undefined;
  const counted = episodes.filter((e) => e.status === "done").length;
  const total = [...resets, ...labels].reduce((sum, s) => sum + s, 0);
  return {
    episodes: counted,
    reset: activity(resets, counted),
    label: activity(labels, counted),
    s_total: round1(total),
    s_per_episode: counted === 0 ? 0 : round1(total / counted),
  };
}

/** The section in words, for the PDF. */
export function operatorTimeText(section: OperatorTimeSection): string[] {
  const line = (what: string, a: OperatorActivity) => a.count === 0
    ? `${what}: none waited for a person.`
    : `${what}: ${a.count}, ${a.s_total} s in all, ${a.s_mean} s each on average, ${a.s_per_episode} s per counted episode.`;
  return [
    line("Resets set by a person", section.reset),
    line("Episodes judged by a person", section.label),
    `Together: ${section.s_total} s of a person's time, ${section.s_per_episode} s per episode counted in n (${section.episodes}).`,
  ];
}

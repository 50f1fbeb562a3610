/**
 * The report's `operator_time` (issue 26 item 6): the people's time behind a run on real cells, the
 * figure a lab plans staff with. The figures come from the run's operator activities
 * (coordinator/runs/operator-time.ts `operatorActivities`, which the Result's `operator_time` reads
 * too): resets (from `awaiting_reset` to the answer), labelling (from `awaiting_label` to the label or
 * the timeout) and interventions a person performed (from the offer to Done). Per activity: how many,
 * total seconds, mean per occurrence, and seconds per episode counted in n; then all three together per
 * counted episode. Absent when no person was involved; this file adds when and the words for the PDF.
 */
import { operatorActivities, type OperatorActivities, type OperatorActivity } from "../runs/operator-time.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

export type { OperatorActivity };
export type OperatorTimeSection = OperatorActivities;

/** The section over a run's episodes, or undefined when no reset, label or intervention involved a person. */
export function operatorTimeSection(episodes: readonly EpisodeRecord[]): OperatorTimeSection | undefined {
  const section = operatorActivities(episodes);
  return section.reset.count + section.label.count + section.intervention.count === 0 ? undefined : section;
}

/** The section in words, for the PDF. */
export function operatorTimeText(section: OperatorTimeSection): string[] {
  const line = (what: string, none: string, a: OperatorActivity) => a.count === 0
    ? `${what}: ${none}.`
    : `${what}: ${a.count}, ${a.s_total} s in all, ${a.s_mean} s each on average, ${a.s_per_episode} s per counted episode.`;
  return [
    line("Resets set by a person", "none waited for a person", section.reset),
    line("Episodes judged by a person", "none waited for a person", section.label),
    line("Interventions a person performed (from the offer to Done)", "none", section.intervention),
    `Together: ${section.s_total} s of a person's time, ${section.s_per_episode} s per episode counted in n (${section.episodes}).`,
  ];
}

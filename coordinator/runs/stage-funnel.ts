/**
 * The stage funnel of a set of finished episodes: for each stage of the task, in task order, how
 * many episodes reached it out of those whose evaluation reports stages, and how many of the
 * policy's failures stopped there (their last stage reached). docs/failures.md, "The stage funnel".
 *
 * A pure function over episode records, so the Result, the console and the PDF report show the same
 * numbers: `stageFunnel(listEpisodeRecords(...).filter(done))`.
 */
import { lastStageReached } from "../../protocol/failure-clusters.js";
import { policySucceeded, type OutcomeEpisode } from "./policy-outcome.js";

/** One stage's row. */
export interface StageFunnelRow {
  stage: string;
  /** Episodes that reached this stage. */
  reached: number;
  /** Episodes whose evaluation reports this stage (for a run of one task: every finished episode with stages). */
  of: number;
  /** The policy's failures whose last stage reached is this one: where they stopped. */
  stopped: number;
}

/** What the funnel reads of an episode. */
export type FunnelEpisode = OutcomeEpisode & { evaluation: Record<string, unknown> | null };

/** The stages an episode's evaluation reports (`{stages: {name: reached}}`), in the order recorded (the task's). */
export function stagesOf(evaluation: Record<string, unknown> | null): Array<{ name: string; reached: boolean }> | null {
  const stages = evaluation?.stages;
  if (!stages || typeof stages !== "object" || Array.isArray(stages)) return null;
  return Object.entries(stages as Record<string, unknown>).map(([name, reached]) => ({ name, reached: reached === true }));
}

/** The last stage an episode reached (null: none, or its evaluation reports no stages). */
export function lastStageOf(evaluation: Record<string, unknown> | null): string | null {
  const stages = stagesOf(evaluation);
  return stages ? lastStageReached(stages) : null;
}

/**
 * The funnel over finished episodes, fed in order a slice at a time (a Result's passes in turns,
 * result-summary.ts); `rows()` equals `stageFunnel` of everything added.
 */
export class StageFunnelTally {
  private readonly byStage = new Map<string, StageFunnelRow>();

  add(episode: FunnelEpisode): void {
    const stages = stagesOf(episode.evaluation);
    if (!stages || stages.length === 0) return;
    for (const { name, reached } of stages) {
      const row = this.byStage.get(name) ?? { stage: name, reached: 0, of: 0, stopped: 0 };
      row.of += 1;
      if (reached) row.reached += 1;
      this.byStage.set(name, row);
    }
    const last = lastStageReached(stages);
    if (last !== null && !policySucceeded(episode)) this.byStage.get(last)!.stopped += 1;
  }

  rows(): StageFunnelRow[] {
    return [...this.byStage.values()].map((row) => ({ ...row }));
  }
}

/**
 * The funnel over finished episodes; stages in the order the first episode reporting them lists them
 * (the task's order), a stage only some episodes report counted over those that do.
 */
export function stageFunnel(episodes: readonly FunnelEpisode[]): StageFunnelRow[] {
  const tally = new StageFunnelTally();
  for (const episode of episodes) tally.add(episode);
  return tally.rows();
}

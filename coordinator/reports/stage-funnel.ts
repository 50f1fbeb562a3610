/**
 * The stage funnel of a report: of the episodes counted, how many reached each stage of the task, in
 * the task's order, then how many succeeded. The Result's `stage_funnel` when it carries one, else
 * the same computation (runs/stage-funnel.ts) over the counted episodes, for Results stored before
 * the funnel was part of them: the report and the Result always agree.
 */
import { policySucceeded } from "../runs/policy-outcome.js";
import { stageFunnel, type StageFunnelRow } from "../runs/stage-funnel.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

type FunnelEpisode = Pick<EpisodeRecord, "status" | "outcome" | "evaluation" | "meta">;

export type FunnelStep = Pick<StageFunnelRow, "stage" | "reached" | "of">;

export interface StageFunnel {
  /** Episodes counted in n. */
  episodes: number;
  steps: FunnelStep[];
  /** Counted episodes the policy succeeded in on its own (the headline's successes). */
  successes: number;
}

/** The run's funnel over its counted (`done`) episodes: the Result's, else computed from their stage records. */
export function stageFunnelOf(result: Record<string, unknown> | null, episodes: readonly FunnelEpisode[]): StageFunnel {
  const done = episodes.filter((e) => e.status === "done");
  const stored = Array.isArray(result?.stage_funnel) ? (result.stage_funnel as StageFunnelRow[]) : undefined;
  const steps = (stored ?? stageFunnel(done)).map(({ stage, reached, of }) => ({ stage, reached, of }));
  return { episodes: done.length, steps, successes: done.filter(policySucceeded).length };
}

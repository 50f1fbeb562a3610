/**
 * The stage funnel of a report: of the episodes counted, how many reached each stage of the task, in
 * the task's order, then how many succeeded. Read from the Result's `stage_funnel` when the Result
 * carries one (issue 28 item 3 adds it), else derived here from each counted episode's stage record
 * (`evaluation.stages: {name: reached}`, stages in first-seen order). NOTE: the two sources must
 * agree on "reached"; once every stored Result has `stage_funnel`, `derivedStageFunnel` can go.
 */
import { policySucceeded } from "../runs/policy-outcome.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";

type FunnelEpisode = Pick<EpisodeRecord, "status" | "outcome" | "evaluation" | "meta">;

export interface FunnelStep {
  stage: string;
  /** Counted episodes that reached the stage. */
  reached: number;
  /** Counted episodes that report the stage at all. */
  of: number;
}

export interface StageFunnel {
  /** Episodes counted in n. */
  episodes: number;
  steps: FunnelStep[];
  /** Counted episodes the policy succeeded in on its own (the headline's successes). */
  successes: number;
}

/** The funnel of the counted (`done`) episodes from their stage records. */
export function derivedStageFunnel(episodes: readonly FunnelEpisode[]): StageFunnel {
  const done = episodes.filter((e) => e.status === "done");
  const steps = new Map<string, FunnelStep>();
  for (const e of done) {
    const stages = e.evaluation?.stages;
    if (!stages || typeof stages !== "object") continue;
    for (const [stage, reached] of Object.entries(stages as Record<string, unknown>)) {
      const step = steps.get(stage) ?? { stage, reached: 0, of: 0 };
      step.of += 1;
      if (reached === true) step.reached += 1;
      steps.set(stage, step);
    }
  }
  return { episodes: done.length, steps: [...steps.values()], successes: done.filter(policySucceeded).length };
}

/** The Result's own funnel when it has one in a shape this reads, else undefined. */
export function resultStageFunnel(result: Record<string, unknown> | null, n: number, successes: number): StageFunnel | undefined {
  const funnel = result?.stage_funnel as unknown;
  const list = Array.isArray(funnel) ? funnel : (funnel && typeof funnel === "object" && Array.isArray((funnel as { stages?: unknown }).stages) ? (funnel as { stages: unknown[] }).stages : undefined);
  if (!list) return undefined;
  const steps: FunnelStep[] = [];
  for (const item of list) {
    if (!item || typeof item !== "object") return undefined;
    const s = item as Record<string, unknown>;
    const stage = s.stage ?? s.name;
    const reached = s.reached ?? s.count;
    if (typeof stage !== "string" || typeof reached !== "number") return undefined;
    steps.push({ stage, reached, of: typeof s.of === "number" ? s.of : typeof s.n === "number" ? s.n : n });
  }
  return { episodes: n, steps, successes };
}

/** The run's funnel: the Result's, else derived from the episodes. */
export function stageFunnelOf(result: Record<string, unknown> | null, episodes: readonly FunnelEpisode[]): StageFunnel {
  const derived = derivedStageFunnel(episodes);
  return resultStageFunnel(result, derived.episodes, derived.successes) ?? derived;
}

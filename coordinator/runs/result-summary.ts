/**
 * A Result as the spec shows it, computed from episode rows: the leaf every kind builds on.
 *
 * The Result carries the spec's fields exactly (n, success_rate, ci95, interval_method,
 * failure_clusters, robot_hours, environment_hours, cost_usd, artifacts) plus `stages`: per-stage
 * rates, which the spec says ship in results. Stage rates are counted from each episode's
 * evaluation (`{"stages": {"grasped": true, ...}}`); an episode that does not report a stage does
 * not count towards that stage's n.
 */
import { wilsonInterval } from "../stats/wilson.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { computeMeters, type MeterContext } from "./meters.js";

/** A binomial rate as the spec shows it. */
export interface RateSummary {
  n: number;
  success_rate: number;
  ci95: [number, number];
  interval_method: "wilson";
}

/** The spec's Result (wire names), plus per-stage rates. */
export interface RunResult extends RateSummary {
  failure_clusters: Record<string, number>;
  robot_hours: number;
  environment_hours: number;
  cost_usd: number;
  artifacts: { mcap: string; video: string; ground_truth: string; report_pdf: string };
  stages: Record<string, RateSummary>;
  /** The Wilson interval at the confidence the run was sized at with auto(ci, moe), when not 95%. */
  ci_requested?: { ci: number; interval: [number, number]; interval_method: "wilson" };
}

/** The Wilson summary of `successes` out of `n`. */
export function rateSummary(successes: number, n: number): RateSummary {
  return { n, success_rate: n === 0 ? 0 : successes / n, ci95: wilsonInterval(successes, n, 0.95), interval_method: "wilson" };
}

/** Per-stage rates from the evaluations of finished episodes, stages in first-seen order. */
export function stageRates(episodes: readonly Pick<EpisodeRecord, "evaluation">[]): Record<string, RateSummary> {
  const tallies = new Map<string, { n: number; ok: number }>();
  for (const episode of episodes) {
    const stages = episode.evaluation?.stages;
    if (!stages || typeof stages !== "object") continue;
    for (const [name, reached] of Object.entries(stages as Record<string, unknown>)) {
      const tally = tallies.get(name) ?? { n: 0, ok: 0 };
      tally.n += 1;
      if (reached === true) tally.ok += 1;
      tallies.set(name, tally);
    }
  }
  return Object.fromEntries([...tallies].map(([name, t]) => [name, rateSummary(t.ok, t.n)]));
}

/**
 * The Result of a run from all of its episode rows (only `done` ones count towards n; interrupted
 * attempts of any episode count towards the meters).
 */
export function computeRunResult(
  runId: string, episodes: readonly EpisodeRecord[], meterContext: MeterContext, baseUrl: string, options: { requestedCi?: number } = {},
): RunResult {
  const done = episodes.filter((e) => e.status === "done");
  const successes = done.filter((e) => e.outcome === "success").length;
  const failureClusters: Record<string, number> = {};
  for (const e of done) {
    if (e.outcome === "success") continue;
    const cluster = e.failureCluster || "unclassified";
    failureClusters[cluster] = (failureClusters[cluster] ?? 0) + 1;
  }
  const meters = computeMeters(episodes, meterContext);
  const episodesUrl = `${baseUrl}/v1/runs/${runId}/episodes`;
  return {
    ...rateSummary(successes, done.length),
    failure_clusters: failureClusters,
    robot_hours: meters.robotHours,
    environment_hours: meters.environmentHours,
    cost_usd: meters.costUsd,
    artifacts: {
      mcap: `${episodesUrl}?artifact=mcap`,
      video: `${episodesUrl}?artifact=video`,
      ground_truth: `${episodesUrl}?artifact=ground_truth`,
      report_pdf: `${baseUrl}/v1/runs/${runId}/report?format=pdf`,
    },
    stages: stageRates(done),
    ...(options.requestedCi !== undefined
      ? { ci_requested: { ci: options.requestedCi, interval: wilsonInterval(successes, done.length, options.requestedCi), interval_method: "wilson" as const } }
      : {}),
  };
}

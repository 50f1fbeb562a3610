/**
 * A Result as the spec shows it, computed from episode rows: the leaf every kind builds on.
 *
 * The Result carries the spec's fields exactly (n, success_rate, ci95, interval_method,
 * failure_clusters, robot_hours, environment_hours, cost_usd, artifacts) plus:
 * - `stage_funnel`: the stages in task order, episodes that reached each and failures that stopped there.
 * - `stages`: per-stage rates, which the spec says ship in results. Stage rates are counted from
 *   each episode's evaluation (`{"stages": {"grasped": true, ...}}`); an episode that does not
 *   report a stage does not count towards that stage's n.
 * - `cells`: the episodes per physical cell (`by_cell`) and both claims about them, labelled: ci95
 *   is the model-level interval (a new cell of this model; beta-binomial posterior, docs/statistics.md,
 *   "The headline"), `cells.these_cells` the rate on these very cells; with the ICC posterior, the
 *   prior the interval used, whether it rests mostly on that prior, and the sentences every surface
 *   shows (headline-statement.ts).
 * - `assisted` (runs that allow interventions): the rate that counts the successes a human helped.
 *
 * n, success_rate and ci95 count the policy's own outcome (coordinator/runs/policy-outcome.ts): an
 * intervened episode is a failure of the policy, its failure cluster `intervened` when it ended in
 * success with help.
 */
import { inSlices } from "../async/next-turn.js";
import { betaBinomialRate, DEFAULT_HEADLINE_PRIOR, type HeadlinePrior } from "../stats/beta-binomial-rate.js";
import { theseCellsRate, type TheseCellsRate } from "../stats/these-cells-rate.js";
import { wilsonInterval } from "../stats/wilson.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { environmentSeconds, metersOfHours, robotSeconds, type MeterContext } from "./meters.js";
import { headlineStatement } from "./headline-statement.js";
import { StageFunnelTally, type StageFunnelRow } from "./stage-funnel.js";
import { assistedSuccess, policySucceeded, type OutcomeEpisode } from "./policy-outcome.js";

/** A binomial rate as the spec shows it. */
export interface RateSummary {
  n: number;
  success_rate: number;
  ci95: [number, number];
  interval_method: string;
}

/** Episodes per physical cell, and the two claims about them: the model's rate and these cells'. */
export interface CellBreakdown {
  by_cell: Array<{ cell: string; n: number; successes: number; success_rate: number }>;
  /** Cells that ran at least one of the episodes. */
  clusters: number;
  /** n / effective_n: what running on these cells costs the model-level interval (1 with no episodes). */
  design_effect: number;
  /** mean(1 − mean) / posterior variance of the model-level rate: the independent episodes ci95 is worth. */
  effective_n: number;
  /** these_cells.ci95, kept under its earlier name. */
  ci95_these_cells: [number, number];
  /** The rate on these very cells (what they would do over many more episodes), not the model's. */
  these_cells: TheseCellsRate;
  /** Posterior median and 95% upper bound of the intra-cell correlation. */
  icc: { median: number; upper95: number };
  /** The prior the model-level interval was computed with. */
  prior: HeadlinePrior;
  /** The model-level interval rests mostly on the prior (one cell, or cells that say little about the ICC). */
  rests_on_prior: boolean;
  /** The headline in words, as the console, the CLI and the PDF report show it. */
  statement: string[];
}

/** The spec's Result (wire names), plus per-stage rates, per-cell counts and the assisted rate. */
export interface RunResult extends RateSummary {
  failure_clusters: Record<string, number>;
  robot_hours: number;
  environment_hours: number;
  cost_usd: number;
  artifacts: { mcap: string; video: string; ground_truth: string; report_pdf: string };
  stages: Record<string, RateSummary>;
  /** The task's stages in order: reached by how many episodes, and where the policy's failures stopped (stage-funnel.ts). */
  stage_funnel: StageFunnelRow[];
  cells: CellBreakdown;
  /** Runs that allow interventions: successes counted whether or not a human helped. */
  assisted?: RateSummary;
  /** The model-level interval at the confidence the run was sized at with auto(ci, moe), when not 95%. */
  ci_requested?: { ci: number; interval: [number, number]; interval_method: string };
}

/** The Wilson summary of `successes` out of `n`. */
export function rateSummary(successes: number, n: number): RateSummary {
  return { n, success_rate: n === 0 ? 0 : successes / n, ci95: wilsonInterval(successes, n, 0.95), interval_method: "wilson" };
}

/** What a cell-aware rate reads of an episode. */
type CellEpisode = OutcomeEpisode & Pick<EpisodeRecord, "cellId">;

/** Per-cell counts of finished episodes (policy outcomes), fed in order; `byCell()` lists cells in name order. */
class CellTally {
  private readonly tallies = new Map<string, { n: number; successes: number }>();

  add(e: CellEpisode, succeeded = policySucceeded(e)): void {
    const cell = e.cellId ?? "unknown";
    const tally = this.tallies.get(cell) ?? { n: 0, successes: 0 };
    tally.n += 1;
    if (succeeded) tally.successes += 1;
    this.tallies.set(cell, tally);
  }

  byCell(): CellBreakdown["by_cell"] {
    return [...this.tallies].sort(([a], [b]) => a.localeCompare(b))
      .map(([cell, t]) => ({ cell, n: t.n, successes: t.successes, success_rate: t.successes / t.n }));
  }
}

/** Per-cell counts of finished episodes (policy outcomes), cells in name order. */
export function cellTallies(done: readonly CellEpisode[]): CellBreakdown["by_cell"] {
  const tally = new CellTally();
  for (const e of done) tally.add(e);
  return tally.byCell();
}

/**
 * The policy's rate over finished episodes with its per-cell breakdown: ci95 is the model-level
 * interval (beta-binomial posterior under `prior`), `cells.these_cells` the rate on these cells;
 * `interval(ci)` is the model-level interval at another confidence.
 */
export function policyRate(
  done: readonly CellEpisode[], prior: HeadlinePrior = DEFAULT_HEADLINE_PRIOR,
): { rate: RateSummary; cells: CellBreakdown; interval: (ci: number) => [number, number] } {
  return policyRateOfCells(cellTallies(done), prior);
}

/** policyRate from the per-cell counts of the finished episodes. */
function policyRateOfCells(
  byCell: CellBreakdown["by_cell"], prior: HeadlinePrior = DEFAULT_HEADLINE_PRIOR,
): { rate: RateSummary; cells: CellBreakdown; interval: (ci: number) => [number, number] } {
  const n = byCell.reduce((sum, c) => sum + c.n, 0);
  const successes = byCell.reduce((sum, c) => sum + c.successes, 0);
  const clusters = byCell.map((c) => ({ k: c.successes, n: c.n }));
  const interval = (level: number) => betaBinomialRate(clusters, { ci: level, prior }).ci;
  const model = betaBinomialRate(clusters, { prior });
  const theseCells = theseCellsRate(clusters);
  const rate: RateSummary = { n, success_rate: n === 0 ? 0 : successes / n, ci95: model.ci, interval_method: model.interval_method };
  const breakdown = {
    by_cell: byCell,
    clusters: model.clusters,
    design_effect: n === 0 ? 1 : n / model.effective_n,
    effective_n: model.effective_n,
    ci95_these_cells: theseCells.ci95,
    these_cells: theseCells,
    icc: model.icc,
    prior: model.prior,
    rests_on_prior: model.rests_on_prior,
  };
  return { rate, cells: { ...breakdown, statement: headlineStatement(rate, breakdown) }, interval };
}

/** Per-stage counts from the evaluations of finished episodes, fed in order; stages in first-seen order. */
class StageTally {
  private readonly tallies = new Map<string, { n: number; ok: number }>();

  add(episode: Pick<EpisodeRecord, "evaluation">): void {
    const stages = episode.evaluation?.stages;
    if (!stages || typeof stages !== "object") return;
    for (const [name, reached] of Object.entries(stages as Record<string, unknown>)) {
      const tally = this.tallies.get(name) ?? { n: 0, ok: 0 };
      tally.n += 1;
      if (reached === true) tally.ok += 1;
      this.tallies.set(name, tally);
    }
  }

  rates(): Record<string, RateSummary> {
    return Object.fromEntries([...this.tallies].map(([name, t]) => [name, rateSummary(t.ok, t.n)]));
  }
}

/** Per-stage rates from the evaluations of finished episodes, stages in first-seen order. */
export function stageRates(episodes: readonly Pick<EpisodeRecord, "evaluation">[]): Record<string, RateSummary> {
  const tally = new StageTally();
  for (const episode of episodes) tally.add(episode);
  return tally.rates();
}

/** What computeRunResult reads of the run besides its episodes. */
export interface RunResultOptions {
  /** The confidence the run was sized at with auto(ci, moe), when not 0.95. */
  requestedCi?: number;
  /** The run's declared interventions mode; other than "none", the Result carries `assisted`. */
  interventions?: string;
  /** The prior of the model-level interval; DEFAULT_HEADLINE_PRIOR unless given. */
  headlinePrior?: HeadlinePrior;
}

/**
 * What a Result counts of a run's episodes, fed in episode order (`add`, a slice at a time) and read once
 * (`result`): the failure clusters, per-cell, per-stage and funnel counts and the meters' seconds. Each
 * pass over the episodes is a sum in that order, so fed in slices it makes the same Result, to the bit,
 * as fed all at once.
 */
export class RunResultTally {
  private readonly failureClusters: Record<string, number> = {};
  private readonly cells = new CellTally();
  private readonly stages = new StageTally();
  private readonly funnel = new StageFunnelTally();
  /** The meters' seconds over the episodes of any status, summed in order as computeMeters sums them (meters.ts). */
  private robotS = 0;
  private environmentS = 0;
  private successes = 0;
  private done = 0;

  add(episodes: readonly EpisodeRecord[]): void {
    for (const e of episodes) {
      this.robotS += robotSeconds(e);
      this.environmentS += environmentSeconds(e);
      if (e.status !== "done") continue;
      this.done += 1;
      if (e.outcome === "success") this.successes += 1;
      const succeeded = policySucceeded(e);
      if (!succeeded) {
        const cluster = e.failureCluster || (assistedSuccess(e) ? "intervened" : "unclassified");
        this.failureClusters[cluster] = (this.failureClusters[cluster] ?? 0) + 1;
      }
      this.cells.add(e, succeeded);
      this.stages.add(e);
      this.funnel.add(e);
    }
  }

  /** The Result of everything added (only `done` episodes count towards n; interrupted attempts of any count towards the meters). */
  result(runId: string, meterContext: MeterContext, baseUrl: string, options: RunResultOptions = {}): RunResult {
    const { rate, cells, interval } = policyRateOfCells(this.cells.byCell(), options.headlinePrior);
    const meters = metersOfHours(this.robotS / 3600, this.environmentS / 3600, meterContext);
    const episodesUrl = `${baseUrl}/v1/runs/${runId}/episodes`;
    return {
      ...rate,
      failure_clusters: { ...this.failureClusters },
      robot_hours: meters.robotHours,
      environment_hours: meters.environmentHours,
      cost_usd: meters.costUsd,
      artifacts: {
        mcap: `${episodesUrl}?artifact=mcap`,
        video: `${episodesUrl}?artifact=video`,
        ground_truth: `${episodesUrl}?artifact=ground_truth`,
        report_pdf: `${baseUrl}/v1/runs/${runId}/report?format=pdf`,
      },
      stages: this.stages.rates(),
      stage_funnel: this.funnel.rows(),
      cells,
      ...(options.interventions !== undefined && options.interventions !== "none" ? { assisted: rateSummary(this.successes, this.done) } : {}),
      ...(options.requestedCi !== undefined
        ? { ci_requested: { ci: options.requestedCi, interval: interval(options.requestedCi), interval_method: rate.interval_method } }
        : {}),
    };
  }
}

/**
 * The Result of a run from all of its episode rows (only `done` ones count towards n; interrupted
 * attempts of any episode count towards the meters).
 */
export function computeRunResult(
  runId: string, episodes: readonly EpisodeRecord[], meterContext: MeterContext, baseUrl: string, options: RunResultOptions = {},
): RunResult {
  const tally = new RunResultTally();
  tally.add(episodes);
  return tally.result(runId, meterContext, baseUrl, options);
}

/** Episodes a Result's passes read in one turn of the event loop (computeRunResultInTurns). */
export const RESULT_EPISODES_PER_TURN = 500;

/**
 * computeRunResult with a turn of the event loop after every RESULT_EPISODES_PER_TURN episodes: a
 * 10,000-episode run's passes in one piece held the coordinator's loop 35-90 ms (large-run-requests.spec.ts).
 * What stays in one turn is the posterior interval over the per-cell counts (stats/beta-binomial-rate.ts).
 */
export async function computeRunResultInTurns(
  runId: string, episodes: readonly EpisodeRecord[], meterContext: MeterContext, baseUrl: string, options: RunResultOptions = {},
): Promise<RunResult> {
  const tally = new RunResultTally();
  await inSlices(episodes, RESULT_EPISODES_PER_TURN, (slice) => tally.add(slice));
  return tally.result(runId, meterContext, baseUrl, options);
}

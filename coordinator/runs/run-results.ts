/**
 * A run's Result, and the step that completes a run once everything is in.
 *
 * A run completes when it is `running`, every episode is `done` and every artifact row of the run
 * is `stored`. The Result carries the spec's fields exactly (n, success_rate, ci95,
 * interval_method, failure_clusters, robot_hours, environment_hours, cost_usd, artifacts) plus
 * `stages`: per-stage rates, which the spec says ship in results. Stage rates are counted from each
 * episode's evaluation (`{"stages": {"grasped": true, ...}}`); an episode that does not report a
 * stage does not count towards that stage's n.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { ErrorCode } from "../errors/codes.js";
import { wilsonInterval } from "../stats/wilson.js";
import type { Db } from "../store/database.js";
import { countUnstoredArtifacts } from "../store/artifacts-repo.js";
import { countEpisodesByStatus, listAllEpisodes, type EpisodeRow } from "../store/episodes-repo.js";
import { getRunRow as getFullRunRow } from "../store/runs-repo.js";
import { enqueueEvent } from "../webhooks/outbox.js";
import { kindAfterCompleted, kindProgress, kindResult } from "../kinds/kind-results.js";
import { listUnitEpisodes } from "../kinds/units.js";
import { interventionModeOf, interventionSummary, type InterventionSummary } from "./interventions.js";
import { computeMeters, unitMeterContext, type MeterContext } from "./meters.js";
import type { RunEvents } from "./run-events.js";
import type { RunStatus } from "./run-state.js";
import { runView } from "./run-view.js";

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
  /** Top-level Result only (the completer adds it): counts, timestamps and the rate without intervened episodes. */
  interventions?: InterventionSummary;
}

/** The subset of a `runs` row this module reads (snake_case columns, JSON as text). */
export interface RunRowView {
  id: string;
  status: RunStatus;
  priority: string;
  episodes_total: number;
  plan: string;
  request: string;
  resolved_pins: string;
}

/** The run plan stored in `runs.plan`. */
export interface RunPlan {
  model: string;
  firmware: string;
  environment: string;
  seed: number;
  control_rate_hz: number;
  max_duration_s: number;
}

/**
 * The functions of coordinator/store/runs-repo.ts this side calls; the composition root passes
 * that module (`import * as runsRepo from "../store/runs-repo.js"`).
 */
export interface RunsRepo {
  getRunRow(db: Db, runId: string): RunRowView | undefined;
  setRunStatus(db: Db, runId: string, to: RunStatus, opts?: { cell?: string | null; code?: ErrorCode; message?: string }): boolean;
  setRunResult(db: Db, runId: string, result: object): void;
}

/** The Wilson summary of `successes` out of `n`. */
export function rateSummary(successes: number, n: number): RateSummary {
  return { n, success_rate: n === 0 ? 0 : successes / n, ci95: wilsonInterval(successes, n, 0.95), interval_method: "wilson" };
}

/** Per-stage rates from the evaluations of finished episodes, stages in first-seen order. */
export function stageRates(episodes: readonly Pick<EpisodeRow, "evaluation">[]): Record<string, RateSummary> {
  const tallies = new Map<string, { n: number; ok: number }>();
  for (const episode of episodes) {
    if (!episode.evaluation) continue;
    let stages: unknown;
    try {
      stages = (JSON.parse(episode.evaluation) as { stages?: unknown }).stages;
    } catch {
      continue;
    }
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
export function computeRunResult(runId: string, episodes: readonly EpisodeRow[], meterContext: MeterContext, baseUrl: string): RunResult {
  const done = episodes.filter((e) => e.status === "done");
  const successes = done.filter((e) => e.outcome === "success").length;
  const failureClusters: Record<string, number> = {};
  for (const e of done) {
    if (e.outcome === "success") continue;
    const cluster = e.failure_cluster || "unclassified";
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
  };
}

export interface RunCompleterOptions {
  db: Db;
  runsRepo: RunsRepo;
  runEvents: RunEvents;
  pins: FirmwarePins;
  /** Public base of the /v1 API (no trailing slash, no /v1), for the Result's URLs. */
  baseUrl: string;
}

export interface RunCompleter {
  /** Completes the run if it is running and everything is in; returns true when it did. */
  maybeComplete(runId: string): boolean;
  /** Meter context of a run row: tier from the firmware-pins catalog, class from the environment catalogue. */
  meterContextOf(run: RunRowView): MeterContext;
  /**
   * Recomputes and stores the Result of a run that will not complete (stopped or failed) from the
   * episodes that ran so far: n and ci95 describe the `done` episodes only. Call it inside the
   * transaction that changed the episodes. Does nothing for an unknown run.
   */
  storePartialResult(runId: string): void;
}

/** Meter context of a run: tier from the firmware-pins catalog, class from the environment catalogue. */
/** Rates of a kind `run` run (its plan is its one unit); the shared metering path in meters.ts. */
export function meterContextFor(pins: FirmwarePins, run: Pick<RunRowView, "id" | "plan" | "priority">): MeterContext {
  return unitMeterContext(pins, JSON.parse(run.plan) as RunPlan, run.priority, `run ${run.id}`);
}

export function createRunCompleter(options: RunCompleterOptions): RunCompleter {
  const { db, runsRepo, runEvents, pins, baseUrl } = options;

  function meterContextOf(run: RunRowView): MeterContext {
    return meterContextFor(pins, run);
  }

  /**
   * The Result of any run: kind `run` from its plan, a multi-unit kind per unit (coordinator/kinds);
   * either way with the run's interventions section (coordinator/runs/interventions.ts).
   */
  function resultOf(runId: string, run: RunRowView): object {
    const full = getFullRunRow(db, runId);
    const withInterventions = (result: object, episodes: readonly EpisodeRow[]) =>
      ({ ...result, interventions: interventionSummary(interventionModeOf(run.request), episodes.filter((e) => e.status === "done")) });
    if (full?.units) {
      const episodes = listUnitEpisodes(db, runId);
      return withInterventions(kindResult({ db, pins, baseUrl }, full, episodes), episodes);
    }
    const episodes = listAllEpisodes(db, runId);
    return withInterventions(computeRunResult(runId, episodes, meterContextOf(run), baseUrl), episodes);
  }

  function storePartialResult(runId: string): void {
    const run = runsRepo.getRunRow(db, runId);
    if (!run) return;
    runsRepo.setRunResult(db, runId, resultOf(runId, run));
  }

  function maybeComplete(runId: string): boolean {
    let stoppedByKind = false;
    const completed = db.transaction(() => {
      const run = runsRepo.getRunRow(db, runId);
      if (!run || run.status !== "running") return false;
      // A multi-unit kind may decide here (a sequential test cancels what is pending, threshold
      // adds its next episode or stops at its monthly cap).
      const before = getFullRunRow(db, runId);
      if (before?.units && kindProgress({ db, pins, baseUrl }, before, listUnitEpisodes(db, runId), new Date()) === "stopped") {
        runsRepo.setRunResult(db, runId, resultOf(runId, run));
        stoppedByKind = true;
        return false;
      }
      const counts = countEpisodesByStatus(db, runId);
      // Cancelled episodes (a kind decided early) do not hold completion back; at least one must be done.
      if (counts.pending + counts.assigned + counts.running > 0 || counts.done === 0) return false;
      if (countUnstoredArtifacts(db, runId) > 0) return false;
      const result = resultOf(runId, run);
      runsRepo.setRunResult(db, runId, result);
      if (!runsRepo.setRunStatus(db, runId, "completed", { cell: null })) return false;
      // The webhook event commits with the completion (durable outbox).
      const row = getFullRunRow(db, runId);
      if (row) {
        enqueueEvent(db, row.account_id, "run.completed", { run: runView(row) });
        if (row.units) kindAfterCompleted(db, row, result as Record<string, unknown>, new Date());
      }
      return true;
    })();
    if (completed) runEvents.publish({ runId, type: "status", data: { status: "completed", cell: null, webrtc: null } });
    if (stoppedByKind) runEvents.publish({ runId, type: "status", data: { status: "stopped", cell: null, webrtc: null } });
    return completed;
  }

  return { maybeComplete, meterContextOf, storePartialResult };
}

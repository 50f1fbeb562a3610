/**
 * A completed run in a coordinator's store whose episodes are real MCAP recordings (export-fixtures.ts)
 * in its artifact store, without a fleet: for tests of what happens to a run's data after it ran
 * (exports, restarts during an export), and, with `compare`, a paired compare's Result without cells.
 */
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { insertPendingArtifact, markArtifactStored } from "../../coordinator/store/artifacts-repo.js";
import type { RunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import type { Db } from "../../coordinator/store/database.js";
import { markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { writeFixtureEpisodes, type FixtureOptions } from "./export-fixtures.js";

/** What a fixture run is besides its episodes' recordings. */
export interface FixtureRunOptions extends FixtureOptions {
  retention?: string;
  storedAt?: Date;
  accountId?: string;
  /**
   * A paired compare of these two policies instead of a run: episode 2i is pair i's first policy,
   * 2i + 1 its second, both on one cell (`so101-b` for even pairs, `so101-c` for odd ones), blocked by cell.
   */
  compare?: [string, string];
  /** More request fields (policy, policy_name, publish, perturbation, ...), merged over the defaults. */
  request?: Record<string, unknown>;
  /** The resolved robot pin (default so101@3.11). */
  robot?: string;
  /** Episode i's stored evaluation (stages reached, ...), or null. */
  evaluation?: (episode: number) => Record<string, unknown> | null;
}

export async function insertFixtureRun(coordinator: { db: Db; lifecycle: RunLifecycle }, artifactsDir: string, runId: string, options: FixtureRunOptions = {}): Promise<Awaited<ReturnType<typeof writeFixtureEpisodes>>> {
  const { db } = coordinator;
  const fixture = await writeFixtureEpisodes(artifactsDir, { ...options, runId });
  const storedAt = (options.storedAt ?? new Date()).toISOString();
  const robot = options.robot ?? "so101@3.11";
  const [model, firmware] = robot.split("@");
  const compare = options.compare;
  const unitOf = (name: string) => ({
    key: `policy:${name}`, policy_name: name, robot, model, firmware, environment: "tabletop@1", task: "pick-cube@v1", policy: { type: "container", image: `assay/ref-policy:${name}` },
  });
  await runsRepo.insertRun(db, {
    id: runId, accountId: options.accountId ?? DEFAULT_ACCOUNT_ID, kind: compare ? "compare" : "run", created: storedAt,
    request: {
      policy: {}, episodes: compare ? fixture.episodes.length / 2 : fixture.episodes.length, data: { retention: options.retention ?? "30d", train_on_failures: false },
      // The defaults a submission fills in, so the Run reads like any other.
      priority: "standard", perturbation: null, max_budget_usd: null, interventions: "none", publish: "private", instructions: "sampled",
      ...(compare ? { policies: Object.fromEntries(compare.map((name) => [name, unitOf(name).policy])), policy: undefined } : {}),
      ...options.request,
    },
    resolvedPins: { robot, environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model, firmware, environment: "tabletop@1", seed: 1, control_rate_hz: fixture.run.controlRateHz, max_duration_s: 20, ...(compare ? { kind: { compare: { paired: true } } } : {}) },
    priority: "standard", episodesTotal: fixture.episodes.length,
    ...(compare ? {
      units: compare.map(unitOf),
      episodes: fixture.episodes.map((_, i) => ({ unit: i % 2, seed: 1000 + (i >> 1), assign: { pair: i >> 1, order: i % 2, block: "cell" as const } })),
    } : {}),
  });
  for (const [i, e] of fixture.episodes.entries()) {
    const evaluation = options.evaluation?.(i) ?? null;
    await markEpisodeDone(db, e.episodeId, {
      cellId: compare ? ((e.index >> 1) % 2 === 0 ? "so101-b" : "so101-c") : e.cellId ?? "so101-b", outcome: e.outcome, failureCluster: e.failureCluster, durationS: e.durationS ?? 1, resetS: 1,
      replaySpecJson: JSON.stringify(compare ? { ...e.replaySpec, layout_seed: 1000 + (e.index >> 1) } : e.replaySpec), metaJson: null, evaluationJson: evaluation ? JSON.stringify(evaluation) : null, finishedAt: storedAt,
    });
    await insertPendingArtifact(db, { episodeId: e.episodeId, runId, kind: "mcap", fileName: e.mcap.fileName, bytes: e.mcap.bytes, sha256: e.mcap.sha256 });
    await markArtifactStored(db, e.episodeId, "mcap", storedAt);
  }
  // Ended through the lifecycle, so the run has its Result and report like any completed run.
  for (const status of ["scheduling", "running"] as const) await runsRepo.setRunStatus(db, runId, status);
  await coordinator.lifecycle.end(db, runId, { status: "completed" });
  return fixture;
}

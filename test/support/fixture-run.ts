/**
 * A completed run in a coordinator's store whose episodes are real MCAP recordings (export-fixtures.ts)
 * in its artifact store, without a fleet: for tests of what happens to a run's data after it ran
 * (exports, restarts during an export).
 */
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { insertPendingArtifact, markArtifactStored } from "../../coordinator/store/artifacts-repo.js";
import type { RunLifecycle } from "../../coordinator/runs/run-lifecycle.js";
import type { Db } from "../../coordinator/store/database.js";
import { markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { writeFixtureEpisodes, type FixtureOptions } from "./export-fixtures.js";

export async function insertFixtureRun(coordinator: { db: Db; lifecycle: RunLifecycle }, artifactsDir: string, runId: string, options: FixtureOptions & { retention?: string; storedAt?: Date; accountId?: string; request?: Record<string, unknown>; evaluation?: (episode: number) => Record<string, unknown> | null } = {}): Promise<Awaited<ReturnType<typeof writeFixtureEpisodes>>> {
  const { db } = coordinator;
  const fixture = await writeFixtureEpisodes(artifactsDir, { ...options, runId });
  const storedAt = (options.storedAt ?? new Date()).toISOString();
  runsRepo.insertRun(db, {
    id: runId, accountId: options.accountId ?? DEFAULT_ACCOUNT_ID, kind: "run", created: storedAt,
    request: { policy: {}, episodes: fixture.episodes.length, data: { retention: options.retention ?? "30d", train_on_failures: false }, ...options.request },
    resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: fixture.run.controlRateHz, max_duration_s: 20 },
    priority: "standard", episodesTotal: fixture.episodes.length,
  });
  for (const [i, e] of fixture.episodes.entries()) {
    const evaluation = options.evaluation?.(i) ?? null;
    markEpisodeDone(db, e.episodeId, {
      cellId: e.cellId ?? "so101-b", outcome: e.outcome, failureCluster: e.failureCluster, durationS: e.durationS ?? 1, resetS: 1,
      replaySpecJson: JSON.stringify(e.replaySpec), metaJson: null, evaluationJson: evaluation ? JSON.stringify(evaluation) : null, finishedAt: storedAt,
    });
    insertPendingArtifact(db, { episodeId: e.episodeId, runId, kind: "mcap", fileName: e.mcap.fileName, bytes: e.mcap.bytes, sha256: e.mcap.sha256 });
    markArtifactStored(db, e.episodeId, "mcap", storedAt);
  }
  // Ended through the lifecycle, so the run has its Result and report like any completed run.
  for (const status of ["scheduling", "running"] as const) runsRepo.setRunStatus(db, runId, status);
  coordinator.lifecycle.end(runId, { status: "completed" });
  return fixture;
}

/**
 * Which episodes of a run go into an export, read from the store:
 *
 * - Only episodes that ran (status `done`); cancelled and never-run ones are not part of the run's
 *   result and are not counted as left out.
 * - The training formats (lerobot, rlds) leave out what the policy did not do on its own unless the
 *   run's `data.train_on_failures` is true: `failure` (the episode failed) and `intervened` (it
 *   succeeded only because a person helped). The mcap-bundle is the audit record and holds every
 *   episode.
 * - An episode whose MCAP is not stored (never uploaded) is left out as `recording_unavailable`;
 *   one still uploading counts as `pending` so the worker can wait for it.
 */
import { artifactKey } from "../artifacts/artifact-store.js";
import { isPastRetention, retentionOfRequest } from "../data/purge.js";
import { AssayError } from "../errors/assay-error.js";
import { videosByCamera } from "../runs/episode-videos.js";
import { isIntervened, policySucceeded } from "../runs/policy-outcome.js";
import { listArtifacts, type ArtifactRow } from "../store/artifacts-repo.js";
import { listEpisodeRecords, type EpisodeRecord } from "../store/episodes-repo.js";
import type { ExportEpisodes, ExportFormat } from "../store/exports-repo.js";
import type { RunRecord } from "../store/runs-repo.js";
import type { ExportEpisode, ExportRun, StoredObject } from "./export-input.js";

export const TRAINING_FORMATS: ReadonlySet<ExportFormat> = new Set(["lerobot", "rlds"]);

export interface ExportSelection {
  run: ExportRun;
  episodes: ExportEpisode<StoredObject>[];
  counts: ExportEpisodes;
  /** Episodes chosen whose MCAP upload has not finished yet. */
  pending: number;
}

export function trainOnFailuresOf(run: RunRecord): boolean {
  return (run.request as { data?: { train_on_failures?: unknown } }).data?.train_on_failures === true;
}

/**
 * Refuses an export of a run that cannot give one: not completed (422), or recordings purged or
 * past the run's retention (410 retention_expired).
 */
export function assertExportable(run: RunRecord, artifacts: readonly ArtifactRow[], now: Date, what = "exported"): void {
  if (run.status !== "completed") {
    throw new AssayError("contract_validation_failed", `run ${run.id} is ${run.status}; only a completed run can be ${what}`, { runId: run.id });
  }
  const hours = retentionOfRequest(run.request);
  const gone = artifacts.filter((a) => a.status === "purged" || (a.status === "stored" && isPastRetention(a.stored_at, hours, now)));
  if (gone.length > 0) {
    const retention = (run.request as { data?: { retention?: string } }).data?.retention;
    throw new AssayError("retention_expired", `run ${run.id}'s recordings were purged or are past its data.retention (${JSON.stringify(retention ?? "30d")}): ${gone.length} of ${artifacts.length} files are gone, so it can no longer be ${what}`, { runId: run.id });
  }
}

function instructionOf(e: EpisodeRecord, fallback: string): string {
  const realized = e.meta?.perturbations_realized as { instruction?: unknown } | undefined;
  const instruction = realized?.instruction ?? e.replaySpec?.instruction;
  return typeof instruction === "string" && instruction.length > 0 ? instruction : fallback;
}

/** The row's file in the artifact store (its key is known before it is stored). */
function objectOf(row: ArtifactRow): StoredObject {
  return { key: artifactKey({ runId: row.run_id, episodeId: row.episode_id, fileName: row.file_name }), fileName: row.file_name, bytes: row.bytes, sha256: row.sha256 };
}

function storedObject(row: ArtifactRow | undefined): StoredObject | null {
  return row?.status === "stored" ? objectOf(row) : null;
}

export async function selectExportEpisodes(db: Parameters<typeof listEpisodeRecords>[0], run: RunRecord, format: ExportFormat): Promise<ExportSelection> {
  const trainOnFailures = trainOnFailuresOf(run);
  const artifacts = await listArtifacts(db, run.id);
  const byEpisode = new Map<string, Map<string, ArtifactRow>>();
  for (const a of artifacts) {
    const files = byEpisode.get(a.episode_id) ?? new Map<string, ArtifactRow>();
    files.set(a.kind, a);
    byEpisode.set(a.episode_id, files);
  }
  const excluded: Record<string, number> = {};
  const leaveOut = (reason: string) => (excluded[reason] = (excluded[reason] ?? 0) + 1);
  const episodes: ExportEpisode<StoredObject>[] = [];
  let pending = 0;
  const firstUnit = run.units[0]!;
  for (const e of await listEpisodeRecords(db, run.id)) {
    if (e.status !== "done" || (e.outcome !== "success" && e.outcome !== "failure")) continue;
    const succeeded = policySucceeded(e);
    if (TRAINING_FORMATS.has(format) && !trainOnFailures && !succeeded) {
      leaveOut(e.outcome === "failure" ? "failure" : "intervened");
      continue;
    }
    const files = byEpisode.get(e.id);
    const mcapRow = files?.get("mcap");
    // A recording its run completed without (recorded missing) is not awaited: it is left out at once.
    if (mcapRow?.status === "pending" && !mcapRow.missing_since) pending++;
    else if (!storedObject(mcapRow)) {
      leaveOut("recording_unavailable");
      continue;
    }
    const unit = run.units[e.unit] ?? firstUnit;
    episodes.push({
      episodeId: e.id, index: e.idx, outcome: e.outcome, failureCluster: e.failureCluster, intervened: isIntervened(e), policySucceeded: succeeded,
      durationS: e.durationS, instruction: instructionOf(e, unit.task), replaySpec: e.replaySpec, cellId: e.cellId, seed: e.seed,
      robot: unit.robot, environment: unit.environment, task: unit.task,
      // A pending MCAP's row already names its key, size and hash.
      mcap: objectOf(mcapRow!),
      video: storedObject(files?.get("video")),
      videos: Object.fromEntries([...videosByCamera([...(files?.values() ?? [])].filter((a) => a.status === "stored"), e.meta)].map(([camera, a]) => [camera, objectOf(a)])),
      scenarioId: typeof e.assign.scenario === "number" ? e.assign.scenario : null,
    });
  }
  return {
    run: {
      runId: run.id, kind: run.kind, robot: firstUnit.robot, environment: firstUnit.environment, task: firstUnit.task,
      controlRateHz: run.plan.control_rate_hz, resolvedPins: run.resolvedPins as unknown as Record<string, unknown>,
      created: run.created, completed: run.completed, trainOnFailures,
    },
    episodes,
    counts: { included: episodes.length, excluded, train_on_failures: trainOnFailures },
    pending,
  };
}

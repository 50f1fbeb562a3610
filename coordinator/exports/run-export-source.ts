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
 *
 * Nothing here reads a whole run in one statement: the retention check is an aggregate, the selection reads
 * EXPORT_PAGE_EPISODES episodes (and their artifact rows) at a time with a turn of the event loop between pages
 * (on SQLite a statement runs synchronously; a 10,000-episode run read in one piece held the loop 1.2-2.4 s).
 */
import { artifactKey } from "../artifacts/artifact-store.js";
import { isPastRetention, retentionOfRequest } from "../data/purge.js";
import { AssayError } from "../errors/assay-error.js";
import { videosByCamera } from "../runs/episode-videos.js";
import { isIntervened, policySucceeded } from "../runs/policy-outcome.js";
import { nextTurn } from "../async/next-turn.js";
import { countRunArtifactsGone, summarizeRunArtifacts, type ArtifactRow } from "../store/artifacts-repo.js";
import type { Db } from "../store/database.js";
import { listArtifactsOfEpisodes, listDoneEpisodesPage } from "../store/done-episodes-repo.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import type { ExportEpisodes, ExportFormat } from "../store/exports-repo.js";
import type { RunRecord } from "../store/runs-repo.js";
import type { ExportEpisode, ExportRun, StoredObject } from "./export-input.js";

export const TRAINING_FORMATS: ReadonlySet<ExportFormat> = new Set(["lerobot", "rlds"]);

/** Episodes read per step of a selection (the listing's page: GET /v1/runs/{run_id}/episodes). */
export const EXPORT_PAGE_EPISODES = 100;

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
 * past the run's retention (410 retention_expired). Decided from index lookups of the run's artifact
 * rows: retention is a bound on `stored_at`, so the earliest stored row decides whether any is past it.
 */
export async function assertExportable(db: Db, run: RunRecord, now: Date, what = "exported"): Promise<void> {
  if (run.status !== "completed") {
    throw new AssayError("contract_validation_failed", `run ${run.id} is ${run.status}; only a completed run can be ${what}`, { runId: run.id });
  }
  const hours = retentionOfRequest(run.request);
  const artifacts = await summarizeRunArtifacts(db, run.id);
  if (!artifacts.anyPurged && !(artifacts.firstKeptAt !== null && isPastRetention(artifacts.firstKeptAt, hours, now))) return;
  // isPastRetention(stored_at) is stored_at <= now - retention; stored_at is toISOString's text, ordered as time.
  const { gone, total } = await countRunArtifactsGone(db, run.id, new Date(now.getTime() - hours * 3_600_000).toISOString());
  const retention = (run.request as { data?: { retention?: string } }).data?.retention;
  throw new AssayError("retention_expired", `run ${run.id}'s recordings were purged or are past its data.retention (${JSON.stringify(retention ?? "30d")}): ${gone} of ${total} files are gone, so it can no longer be ${what}`, { runId: run.id });
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

/**
 * Walks the run's episodes that go into a `format` export, read a page at a time (see the top), handing each
 * included one to `include`; returns the counts. Not one snapshot: the run is completed, so its episodes no longer
 * change; an artifact row can (a late upload stored, a purge), and a page shows it as it is when read, as the export
 * worker reads the selection again when it makes the archive and checks retention before and after.
 */
async function walkExportEpisodes(
  db: Db, run: RunRecord, format: ExportFormat,
  include: (e: EpisodeRecord, files: Map<string, ArtifactRow> | undefined, mcapRow: ArtifactRow, succeeded: boolean) => void,
): Promise<{ counts: ExportEpisodes; pending: number }> {
  const trainOnFailures = trainOnFailuresOf(run);
  const excluded: Record<string, number> = {};
  const leaveOut = (reason: string) => (excluded[reason] = (excluded[reason] ?? 0) + 1);
  let included = 0;
  let pending = 0;
  for (let afterIdx = -1; ;) {
    const page = await listDoneEpisodesPage(db, run.id, {}, afterIdx, EXPORT_PAGE_EPISODES);
    const byEpisode = new Map<string, Map<string, ArtifactRow>>();
    for (const a of await listArtifactsOfEpisodes(db, page.map((e) => e.id))) {
      const files = byEpisode.get(a.episode_id) ?? new Map<string, ArtifactRow>();
      files.set(a.kind, a);
      byEpisode.set(a.episode_id, files);
    }
    for (const e of page) {
      if (e.outcome !== "success" && e.outcome !== "failure") continue;
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
      included++;
      include(e, files, mcapRow!, succeeded);
    }
    if (page.length < EXPORT_PAGE_EPISODES) break;
    afterIdx = page[page.length - 1]!.idx;
    await nextTurn();
  }
  return { counts: { included, excluded, train_on_failures: trainOnFailures }, pending };
}

/**
 * What a `format` export of the run holds, counted (a request's answer: no episode kept in memory; 10,000 of them
 * made the garbage collector's pauses the longest turn of the loop).
 */
export async function countExportEpisodes(db: Db, run: RunRecord, format: ExportFormat): Promise<ExportEpisodes> {
  return (await walkExportEpisodes(db, run, format, () => {})).counts;
}

/** The run's episodes that go into a `format` export, and the counts. */
export async function selectExportEpisodes(db: Db, run: RunRecord, format: ExportFormat): Promise<ExportSelection> {
  const episodes: ExportEpisode<StoredObject>[] = [];
  const firstUnit = run.units[0]!;
  const { counts, pending } = await walkExportEpisodes(db, run, format, (e, files, mcapRow, succeeded) => {
    const unit = run.units[e.unit] ?? firstUnit;
    episodes.push({
      episodeId: e.id, index: e.idx, outcome: e.outcome!, failureCluster: e.failureCluster, intervened: isIntervened(e), policySucceeded: succeeded,
      durationS: e.durationS, instruction: instructionOf(e, unit.task), replaySpec: e.replaySpec, cellId: e.cellId, seed: e.seed,
      robot: unit.robot, environment: unit.environment, task: unit.task,
      // A pending MCAP's row already names its key, size and hash.
      mcap: objectOf(mcapRow),
      video: storedObject(files?.get("video")),
      videos: Object.fromEntries([...videosByCamera([...(files?.values() ?? [])].filter((a) => a.status === "stored"), e.meta)].map(([camera, a]) => [camera, objectOf(a)])),
      scenarioId: typeof e.assign.scenario === "number" ? e.assign.scenario : null,
    });
  });
  return {
    run: {
      runId: run.id, kind: run.kind, robot: firstUnit.robot, environment: firstUnit.environment, task: firstUnit.task,
      controlRateHz: run.plan.control_rate_hz, resolvedPins: run.resolvedPins as unknown as Record<string, unknown>,
      created: run.created, completed: run.completed, trainOnFailures: counts.train_on_failures,
    },
    episodes,
    counts,
    pending,
  };
}

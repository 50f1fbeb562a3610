/**
 * Run exports (POST /v1/runs/{run_id}/export): requesting one, its API view, making it (the archive
 * worker's job kind for the `exports` table), and expiring it.
 *
 * Files: the archive is the object `.exports/<export_id>/<file_name>` in the artifact store. While a
 * training format is being made, `<workDir>/<export_id>/` on local disk holds the dataset tree it is
 * made from (and, with a bucket, the recordings fetched for it), deleted once archived. A download
 * stays available for `availabilityMs` after it is ready (default 7 days), never past the run's own
 * data retention: the archive holds the recordings.
 */
import { nextTurn } from "../async/next-turn.js";
import { serialQueue } from "../async/serial-queue.js";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { randomBase62 } from "../auth/api-keys.js";
import { retentionOfRequest } from "../data/purge.js";
import { AssayError } from "../errors/assay-error.js";
import { buildReport } from "../reports/report.js";
import type { ObjectStore } from "../storage/object-store.js";
import { getArtifact, summarizeRunArtifacts } from "../store/artifacts-repo.js";
import type { Db } from "../store/database.js";
import {
  claimArchiveRow, findReusableExport, getExport, insertExport, listExportsIn, moveExport, renewArchiveLease, setExportProgress, setExportSelection,
  type ExportFormat, type ExportRow,
} from "../store/exports-repo.js";
import { getRun, type RunRecord } from "../store/runs-repo.js";
import type { ArchiveJobKind } from "./archive-worker.js";
import type { DatasetWriter } from "./dataset-writer.js";
import { admitArchive, type ArchiveAdmission } from "./export-admission.js";
import { archiveKey, removeArchiveFiles } from "../data/export-files.js";
import { withLocalRecordings } from "./local-recordings.js";
import { mcapBundleEntries } from "./mcap-bundle.js";
import { assertExportable, countExportEpisodes, EXPORT_PAGE_EPISODES, selectExportEpisodes, TRAINING_FORMATS, type ExportSelection } from "./run-export-source.js";
import { writeTarArchive } from "./tar-archive.js";

export const DEFAULT_EXPORT_AVAILABILITY_MS = 7 * 24 * 3_600_000;
export const DEFAULT_PENDING_UPLOAD_WAIT_MS = 10 * 60_000;

export function exportFileName(runId: string, format: ExportFormat): string {
  return `assay-${runId}-${format}.tar`;
}

/** The API's Export. */
export function exportView(row: ExportRow, artifactUrl: string, now: Date): Record<string, unknown> {
  const lapsed = row.status === "ready" && row.expires_at !== null && now.getTime() >= Date.parse(row.expires_at);
  const status = lapsed ? "expired" : row.status;
  const ready = status === "ready";
  return {
    object: "export",
    id: row.id,
    run_id: row.run_id,
    format: row.format,
    status,
    download_url: ready ? `${artifactUrl}/exports/${row.id}/${row.file_name}` : null,
    created: row.created,
    progress: { episodes_done: row.episodes_done, episodes_total: row.episodes_total },
    episodes: JSON.parse(row.episodes),
    file: row.file_name !== null && row.bytes !== null && row.sha256 !== null && status !== "expired"
      ? { name: row.file_name, bytes: row.bytes, sha256: row.sha256, content_type: "application/x-tar" }
      : null,
    ready_at: row.ready_at,
    expires_at: row.expires_at,
    failure: status === "failed" || status === "expired"
      ? { reason: lapsed ? "availability" : row.failure_reason, message: lapsed ? `the download was available until ${row.expires_at}; request a new export` : row.failure_message }
      : null,
  };
}

/**
 * Answers POST /v1/runs/{run_id}/export: the account's identical export when it has one preparing
 * or ready (`reused`, 200), else a new one recorded in `preparing` (202) for the worker, within the
 * account's queue limit (export-admission.ts).
 */
export async function requestRunExport(db: Db, run: RunRecord, format: ExportFormat, now: Date, queuedPerAccount: number): Promise<ArchiveAdmission<ExportRow>> {
  return await admitArchive(db, run.accountId, queuedPerAccount, {
    existing: (tx) => findReusableExport(tx, run.accountId, run.id, format, now.toISOString()),
    validate: () => validateRunExport(db, run, format, now),
    insert: (tx, counts) => insertRunExport(tx, run, format, now, counts),
  });
}

/** What a new export of `run` would hold (its counts), or the request's error: 422 when not completed or nothing to export, 410 when purged. */
async function validateRunExport(db: Db, run: RunRecord, format: ExportFormat, now: Date): Promise<ExportSelection["counts"]> {
  await assertExportable(db, run, now);
  const counts = await countExportEpisodes(db, run, format);
  if (counts.included === 0) {
    const left = Object.entries(counts.excluded).map(([reason, n]) => `${n} ${reason}`).join(", ") || "none ran";
    const hint = TRAINING_FORMATS.has(format) && !counts.train_on_failures
      ? `; the run was submitted with data.train_on_failures false, so ${format} holds only episodes the policy succeeded in on its own. Export mcap-bundle for every episode`
      : "";
    throw new AssayError("contract_validation_failed", `run ${run.id} has no episode to export as ${format} (left out: ${left})${hint}`, { runId: run.id });
  }
  return counts;
}

/** Records a new export of `run` (validated: `counts` is what it holds). */
async function insertRunExport(db: Db, run: RunRecord, format: ExportFormat, now: Date, counts: ExportSelection["counts"]): Promise<ExportRow> {
  const id = `exp_${randomBase62(20)}`;
  await insertExport(db, {
    id, account_id: run.accountId, run_id: run.id, format, created: now.toISOString(), episodes_total: counts.included, episodes: JSON.stringify(counts),
  });
  return (await getExport(db, id))!;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export interface RunExportJobOptions {
  db: Db;
  /** The artifact store: recordings are read from it, archives written to it. */
  objects: ObjectStore;
  /** Local folder for what an export is made from (one subfolder per export, removed after). */
  workDir: string;
  /** Writes the training datasets (on a worker thread: dataset-writer.ts). */
  datasetWriter: DatasetWriter;
  baseUrl: string;
  now: () => Date;
  availabilityMs?: number;
  /** How long a completed run's unfinished uploads are waited for before their episodes are left out. Default 10 min. */
  pendingUploadWaitMs?: number;
}

/** The archive worker's job kind for run exports. */
export function runExportJobs(options: RunExportJobOptions): ArchiveJobKind<ExportRow> {
  const { db, objects, workDir, datasetWriter, now } = options;
  const availabilityMs = options.availabilityMs ?? DEFAULT_EXPORT_AVAILABILITY_MS;
  const pendingWaitMs = options.pendingUploadWaitMs ?? DEFAULT_PENDING_UPLOAD_WAIT_MS;

  /** The selection once uploads still running have finished (or the wait ran out: those are left out). */
  const settledSelection = async (run: RunRecord, format: ExportFormat, signal: AbortSignal): Promise<ExportSelection> => {
    const deadline = Date.now() + pendingWaitMs;
    let selection = await selectExportEpisodes(db, run, format);
    while (selection.pending > 0 && Date.now() < deadline) {
      await sleep(500, signal);
      selection = await selectExportEpisodes(db, run, format);
    }
    if (selection.pending === 0) return selection;
    const stored: typeof selection.episodes = [];
    for (const [i, e] of selection.episodes.entries()) {
      if ((await getArtifact(db, e.episodeId, "mcap"))?.status === "stored") stored.push(e);
      if (i % EXPORT_PAGE_EPISODES === EXPORT_PAGE_EPISODES - 1) await nextTurn();
    }
    const excluded = { ...selection.counts.excluded };
    excluded.recording_unavailable = (excluded.recording_unavailable ?? 0) + selection.episodes.length - stored.length;
    return { ...selection, episodes: stored, counts: { ...selection.counts, included: stored.length, excluded }, pending: 0 };
  };

  return {
    name: "export",
    listPreparing: () => listExportsIn(db, "preparing"),
    claim: async (id, lease) => (await claimArchiveRow(db, "exports", id, lease) ? await getExport(db, id) : undefined),
    renew: (id, until) => renewArchiveLease(db, "exports", id, until),
    async fail(id, reason, message) {
      await moveExport(db, id, "failed", { failure_reason: reason, failure_message: message }, "preparing");
    },
    async make(row, signal) {
      const run = await getRun(db, row.run_id);
      if (!run) throw new Error(`run ${row.run_id} no longer exists`);
      try {
        await assertExportable(db, run, now());
      } catch (error) {
        if (error instanceof AssayError && error.code === "retention_expired") {
          await moveExport(db, row.id, "expired", { failure_reason: "purged", failure_message: error.message }, "preparing");
          return;
        }
        throw error;
      }
      const selection = await settledSelection(run, row.format, signal);
      await setExportSelection(db, row.id, selection.episodes.length, JSON.stringify(selection.counts));
      // What an interrupted attempt left, in the store and on local disk.
      await removeArchiveFiles(objects, row.id);
      const work = join(workDir, row.id);
      await rm(work, { recursive: true, force: true });
      // The writers report progress synchronously (and are stopped by its throw); the writes to the
      // store follow in order, and all have landed before the export is marked ready.
      let progressError: unknown;
      const progressWrites = serialQueue((error) => void (progressError ??= error));
      const progress = (done: number) => {
        signal.throwIfAborted();
        void progressWrites.push(() => setExportProgress(db, row.id, done));
      };
      const fileName = exportFileName(run.id, row.format);
      const key = archiveKey(row.id, fileName);
      let archive;
      try {
        if (row.format === "mcap-bundle") {
          const report = await buildReport(db, run, options.baseUrl, now());
          archive = await writeTarArchive(objects, key, mcapBundleEntries(objects, selection.run, selection.episodes, selection.counts.excluded, report, now().toISOString(), progress), signal);
        } else {
          const dataset = join(work, "dataset");
          await mkdir(dataset, { recursive: true });
          // LeRobot copies the cells' videos into its dataset where they have one frame per control step.
          const episodes = await withLocalRecordings(objects, selection.episodes, join(work, "recordings"), { videos: row.format === "lerobot" });
          archive = await writeTarArchive(objects, key, await datasetWriter.write(row.format, selection.run, episodes, dataset, progress, signal), signal);
        }
      } finally {
        await progressWrites.idle();
        await rm(work, { recursive: true, force: true });
      }
      if (progressError !== undefined) throw progressError;
      const readyAt = now();
      const firstStored = (await summarizeRunArtifacts(db, run.id)).firstStoredAt;
      const retentionEnd = firstStored ? Date.parse(firstStored) + retentionOfRequest(run.request) * 3_600_000 : Infinity;
      const expiresAt = new Date(Math.min(readyAt.getTime() + availabilityMs, retentionEnd)).toISOString();
      const moved = await moveExport(db, row.id, "ready", {
        file_name: fileName, bytes: archive.bytes, sha256: archive.sha256, ready_at: readyAt.toISOString(), expires_at: expiresAt, episodes_done: selection.episodes.length,
      }, "preparing");
      // Purged while it was being made: the purge already expired the row; drop what was written.
      if (!moved) await removeArchiveFiles(objects, row.id);
    },
    async sweep(at) {
      for (const row of await listExportsIn(db, "ready")) {
        if (row.expires_at === null || at.getTime() < Date.parse(row.expires_at)) continue;
        await moveExport(db, row.id, "expired", { failure_reason: "availability", failure_message: `the download was available until ${row.expires_at}; request a new export` }, "ready");
        await removeArchiveFiles(objects, row.id);
      }
    },
  };
}

/**
 * Calibration exports (POST /v1/calibration/exports, scope calibration:export): ground truth of an
 * account's completed runs for a simulator vendor, under a validation-only license. The archive:
 *
 *   calibration-<id>/LICENSE.txt                                   the license text, licensee embedded
 *   calibration-<id>/runs/<run_id>/episodes/<index>-<episode>.json one record per episode (calibration-episode.ts)
 *   calibration-<id>/license.json    canonical JSON {schema, license, files: [{path, bytes, sha256}]}
 *   calibration-<id>/license.sig     ed25519:<key_id>:<base64url> over license.json's exact bytes
 *
 * The service key signs (the key of frozen task specs); a vendor verifies license.sig against
 * GET /v1/signing-keys/<key_id> and each file against license.json.
 */
import { createHash, sign } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { randomBase62 } from "../auth/api-keys.js";
import { retentionOfRequest } from "../data/purge.js";
import { AssayError } from "../errors/assay-error.js";
import { canonicalJson } from "../json/canonical-json.js";
import type { ObjectStore } from "../storage/object-store.js";
import { summarizeRunArtifacts } from "../store/artifacts-repo.js";
import {
  getCalibrationExport, insertCalibrationExport, listCalibrationExportsIn, listReusableCalibrationExports, moveCalibrationExport, type CalibrationExportRow,
} from "../store/calibration-exports-repo.js";
import { claimArchiveRow, renewArchiveLease } from "../store/exports-repo.js";
import type { Db } from "../store/database.js";
import { getRun, type RunRecord } from "../store/runs-repo.js";
import { ensureServiceKey } from "../tasks/signing-keys.js";
import type { ArchiveJobKind } from "./archive-worker.js";
import { admitArchive, type ArchiveAdmission } from "./export-admission.js";
import type { DatasetWriter } from "./dataset-writer.js";
import { calibrationLicense, type CalibrationLicense, type Licensee } from "./calibration-license.js";
import { archiveKey, removeArchiveFiles } from "../data/export-files.js";
import { localFile, releaseLocalFile } from "./local-recordings.js";
import { assertExportable, countExportEpisodes, selectExportEpisodes } from "./run-export-source.js";
import { writeTarArchive, type ArchiveEntry } from "./tar-archive.js";

export interface CalibrationRequest {
  runs: string[];
  licensee: Licensee;
  purpose: string;
  simulator?: string;
}

export const CALIBRATION_LICENSE_SCHEMA = "assay.calibration_license/1";

export function calibrationFileName(id: string): string {
  return `${id}.tar`;
}

export function calibrationExportView(row: CalibrationExportRow, urls: { baseUrl: string; artifactUrl: string }, now: Date): Record<string, unknown> {
  const request = JSON.parse(row.request) as CalibrationRequest;
  const lapsed = row.status === "ready" && row.expires_at !== null && now.getTime() >= Date.parse(row.expires_at);
  const status = lapsed ? "expired" : row.status;
  const keyId = row.signature?.split(":")[1];
  return {
    object: "calibration_export",
    id: row.id,
    status,
    created: row.created,
    runs: request.runs,
    license: JSON.parse(row.license),
    episodes: row.episodes,
    download_url: status === "ready" ? `${urls.artifactUrl}/calibration-exports/${row.id}/${row.file_name}` : null,
    file: status !== "expired" && row.file_name && row.bytes !== null && row.sha256
      ? { name: row.file_name, bytes: row.bytes, sha256: row.sha256, content_type: "application/x-tar" } : null,
    signature: row.signature,
    signing_key_url: keyId ? `${urls.baseUrl}/v1/signing-keys/${keyId}` : null,
    ready_at: row.ready_at,
    expires_at: row.expires_at,
    failure: status === "failed" || status === "expired"
      ? { reason: lapsed ? "availability" : row.failure_reason, message: lapsed ? `the download was available until ${row.expires_at}; request a new calibration export` : row.failure_message }
      : null,
  };
}

/**
 * Answers POST /v1/calibration/exports: the account's calibration export with the same runs,
 * licensee, purpose and simulator when one is preparing or ready (`reused`, 200), else a new one
 * (202) within the account's queue limit (export-admission.ts).
 */
export async function requestCalibrationExport(db: Db, accountId: string, request: CalibrationRequest, now: Date, queuedPerAccount: number): Promise<ArchiveAdmission<CalibrationExportRow>> {
  const wanted = canonicalJson(request);
  return await admitArchive(db, accountId, queuedPerAccount, {
    existing: async (tx) => (await listReusableCalibrationExports(tx, accountId, now.toISOString())).find((row) => canonicalJson(JSON.parse(row.request)) === wanted),
    validate: () => validateCalibrationRequest(db, accountId, request, now),
    insert: (tx) => insertCalibrationRequest(tx, accountId, request, now),
  });
}

/** Checks every run: this account's, completed, recordings kept, one at least with a stored recording (read a page at a time). */
async function validateCalibrationRequest(db: Db, accountId: string, request: CalibrationRequest, now: Date): Promise<void> {
  for (const runId of request.runs) {
    const run = await getRun(db, runId);
    if (!run || run.accountId !== accountId) throw new AssayError("not_found", `no run ${JSON.stringify(runId)} on this account (runs[${request.runs.indexOf(runId)}])`, { runId });
    await assertExportable(db, run, now, "exported for calibration");
    if ((await countExportEpisodes(db, run, "mcap-bundle")).included === 0) {
      throw new AssayError("contract_validation_failed", `run ${run.id} has no episode with a stored recording to take calibration data from`, { runId: run.id });
    }
  }
}

/** Records the (validated) request; the worker makes it. */
async function insertCalibrationRequest(db: Db, accountId: string, request: CalibrationRequest, now: Date): Promise<CalibrationExportRow> {
  const id = `cal_${randomBase62(20)}`;
  const license = calibrationLicense(request, now);
  await insertCalibrationExport(db, { id, account_id: accountId, created: now.toISOString(), request: JSON.stringify(request), license: JSON.stringify(license) });
  return (await getCalibrationExport(db, id))!;
}

const encode = (text: string) => new TextEncoder().encode(text);

export interface CalibrationJobOptions {
  db: Db;
  /** The artifact store: recordings are read from it, archives written to it. */
  objects: ObjectStore;
  /** Local folder for recordings fetched from a bucket (one subfolder per export, removed after). */
  workDir: string;
  /** Derives each episode's record (on a worker thread: dataset-writer.ts). */
  datasetWriter: Pick<DatasetWriter, "calibrationRecord">;
  now: () => Date;
  availabilityMs: number;
}

export function calibrationExportJobs(options: CalibrationJobOptions): ArchiveJobKind<CalibrationExportRow> {
  const { db, objects, workDir, datasetWriter, now } = options;
  return {
    name: "calibration export",
    listPreparing: () => listCalibrationExportsIn(db, "preparing"),
    claim: async (id, lease) => (await claimArchiveRow(db, "calibration_exports", id, lease) ? await getCalibrationExport(db, id) : undefined),
    renew: (id, until) => renewArchiveLease(db, "calibration_exports", id, until),
    async fail(id, reason, message) {
      await moveCalibrationExport(db, id, "failed", { failure_reason: reason, failure_message: message }, "preparing");
    },
    async make(row, signal) {
      const request = JSON.parse(row.request) as CalibrationRequest;
      const license = JSON.parse(row.license) as CalibrationLicense;
      const runs: RunRecord[] = [];
      for (const runId of request.runs) {
        const run = await getRun(db, runId);
        if (!run) throw new Error(`run ${runId} no longer exists`);
        try {
          await assertExportable(db, run, now(), "exported for calibration");
        } catch (error) {
          if (error instanceof AssayError && error.code === "retention_expired") {
            await moveCalibrationExport(db, row.id, "expired", { failure_reason: "purged", failure_message: error.message }, "preparing");
            return;
          }
          throw error;
        }
        runs.push(run);
      }
      const root = `calibration-${row.id}`;
      // Recordings fetched from a bucket, one at a time.
      const work = join(workDir, row.id);
      const files: Array<{ path: string; bytes: number; sha256: string }> = [];
      let episodes = 0;
      const entries = async function* (): AsyncGenerator<ArchiveEntry> {
        const add = (path: string, data: Uint8Array): ArchiveEntry => {
          files.push({ path, bytes: data.length, sha256: createHash("sha256").update(data).digest("hex") });
          return { name: `${root}/${path}`, data };
        };
        yield add("LICENSE.txt", encode(license.text));
        for (const run of runs) {
          for (const e of (await selectExportEpisodes(db, run, "mcap-bundle")).episodes) {
            signal.throwIfAborted();
            const mcap = await localFile(objects, e.mcap, work);
            let record: Uint8Array;
            try {
              record = await datasetWriter.calibrationRecord(run.id, { ...e, mcap, videos: {} }, e.scenarioId ?? null);
            } finally {
              await releaseLocalFile(objects, mcap);
            }
            yield add(`runs/${run.id}/episodes/${String(e.index).padStart(6, "0")}-${e.episodeId}.json`, record);
            episodes++;
          }
        }
        const licenseJson = encode(canonicalJson({ schema: CALIBRATION_LICENSE_SCHEMA, license, files }));
        const key = await ensureServiceKey(db);
        const signature = `ed25519:${key.id}:${sign(null, licenseJson, key.privateKey).toString("base64url")}`;
        yield { name: `${root}/license.json`, data: licenseJson };
        yield { name: `${root}/license.sig`, data: encode(`${signature}\n`) };
        signed = signature;
      };
      let signed = "";
      const fileName = calibrationFileName(row.id);
      await removeArchiveFiles(objects, row.id);
      let archive: Awaited<ReturnType<typeof writeTarArchive>>;
      try {
        archive = await writeTarArchive(objects, archiveKey(row.id, fileName), entries(), signal);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
      const readyAt = now();
      const firstStored: number[] = [];
      for (const r of runs) {
        const first = (await summarizeRunArtifacts(db, r.id)).firstStoredAt;
        if (first !== null) firstStored.push(Date.parse(first) + retentionOfRequest(r.request) * 3_600_000);
      }
      const expiresAt = new Date(Math.min(readyAt.getTime() + options.availabilityMs, ...firstStored)).toISOString();
      const moved = await moveCalibrationExport(db, row.id, "ready", {
        file_name: fileName, bytes: archive.bytes, sha256: archive.sha256, signature: signed, episodes, ready_at: readyAt.toISOString(), expires_at: expiresAt,
      }, "preparing");
      if (!moved) await removeArchiveFiles(objects, row.id);
    },
    async sweep(at) {
      for (const row of await listCalibrationExportsIn(db, "ready")) {
        if (row.expires_at === null || at.getTime() < Date.parse(row.expires_at)) continue;
        await moveCalibrationExport(db, row.id, "expired", { failure_reason: "availability", failure_message: `the download was available until ${row.expires_at}; request a new calibration export` }, "ready");
        await removeArchiveFiles(objects, row.id);
      }
    },
  };
}

/**
 * Run exports (scope runs:read: an export reads the run's recordings out, as downloading them does):
 * - POST /v1/runs/{run_id}/export: 202 with the Export in `preparing`; the archive worker makes it.
 *   200 with the account's identical export when one is preparing or ready; 429 past the account's
 *   queue limit (exports/export-admission.ts). The same for POST /v1/calibration/exports.
 * - GET /v1/exports/{export_id}: poll it (status, progress, file, expiry).
 * - GET /v1/runs/{run_id}/exports: the run's exports, newest first.
 * The archive itself is served under /artifacts/exports/{export_id}/{file_name} (exportDownloadRouter).
 */
import { Router, type Request, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { archiveKey } from "../../data/export-files.js";
import { ARCHIVE_CONTENT_TYPE } from "../../exports/tar-archive.js";
import { calibrationExportView, requestCalibrationExport } from "../../exports/calibration-exports.js";
import { exportView, requestRunExport } from "../../exports/run-exports.js";
import { getCalibrationExport, listCalibrationExports, type CalibrationExportRow } from "../../store/calibration-exports-repo.js";
import { getExport, listRunExports, type ExportRow } from "../../store/exports-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { sendObject } from "../send-object.js";
import { CalibrationExportRequest, ExportRequest } from "../schemas/exports.js";
import { parseBody } from "../validate-request.js";
import { requireRun } from "./runs.js";

async function requireExport(deps: CompiledApiDeps, accountId: string, exportId: string): Promise<ExportRow> {
  const row = await getExport(deps.db, exportId);
  if (!row || row.account_id !== accountId) throw new AssayError("not_found", `no export ${JSON.stringify(exportId)} on this account`);
  return row;
}

async function requireCalibrationExport(deps: CompiledApiDeps, accountId: string, id: string): Promise<CalibrationExportRow> {
  const row = await getCalibrationExport(deps.db, id);
  if (!row || row.account_id !== accountId) throw new AssayError("not_found", `no calibration export ${JSON.stringify(id)} on this account`);
  return row;
}

export function exportsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.post("/runs/:runId/export", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const { format } = parseBody(ExportRequest, req.body);
    const { row, reused } = await requestRunExport(deps.db, run, format, deps.clock(), deps.exportsQueuedPerAccount);
    if (!reused) deps.archives.kick();
    res.status(reused ? 200 : 202).location(`${deps.urls.baseUrl}/v1/exports/${row.id}`).json(exportView(row, deps.urls.artifactUrl, deps.clock()));
  });

  router.get("/runs/:runId/exports", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const now = deps.clock();
    res.json({ object: "list", url: `/v1/runs/${run.id}/exports`, data: (await listRunExports(deps.db, run.id)).map((row) => exportView(row, deps.urls.artifactUrl, now)) });
  });

  router.get("/exports/:exportId", async (req, res) => {
    res.json(exportView(await requireExport(deps, authOf(res).accountId, req.params.exportId), deps.urls.artifactUrl, deps.clock()));
  });

  router.post("/calibration/exports", async (req, res) => {
    const { accountId } = authOf(res);
    const request = parseBody(CalibrationExportRequest, req.body);
    const { row, reused } = await requestCalibrationExport(deps.db, accountId, request, deps.clock(), deps.exportsQueuedPerAccount);
    if (!reused) deps.archives.kick();
    res.status(reused ? 200 : 202).location(`${deps.urls.baseUrl}/v1/calibration/exports/${row.id}`).json(calibrationExportView(row, deps.urls, deps.clock()));
  });

  router.get("/calibration/exports", async (_req, res) => {
    const now = deps.clock();
    res.json({ object: "list", url: "/v1/calibration/exports", data: (await listCalibrationExports(deps.db, authOf(res).accountId)).map((row) => calibrationExportView(row, deps.urls, now)) });
  });

  router.get("/calibration/exports/:calibrationExportId", async (req, res) => {
    res.json(calibrationExportView(await requireCalibrationExport(deps, authOf(res).accountId, req.params.calibrationExportId), deps.urls, deps.clock()));
  });

  return router;
}

/** Serves a prepared archive: 410 once expired, 404 (saying why) until ready; Range requests supported (send-object.ts). */
async function sendArchive(
  deps: CompiledApiDeps, req: Request, res: Response, what: string, poll: string,
  row: { id: string; file_name: string | null; sha256: string | null; failure_message: string | null; run_id?: string }, view: Record<string, unknown>, fileName: string,
): Promise<void> {
  const runId = row.run_id;
  if (view.status === "expired") throw new AssayError("retention_expired", `${what} ${row.id} expired (${(view.failure as { message: string }).message})`, { runId });
  if (view.status !== "ready" || row.file_name !== fileName) {
    const why = view.status === "preparing" ? `is still preparing; poll GET ${poll} until its status is ready`
      : view.status === "failed" ? `failed (${row.failure_message}); request a new one`
      : `has no file named ${JSON.stringify(fileName)}; use its download_url`;
    throw new AssayError("not_found", `${what} ${row.id} ${why}`, { runId });
  }
  await sendObject(deps.objects, req, res, {
    key: archiveKey(row.id, row.file_name), fileName: row.file_name, contentType: ARCHIVE_CONTENT_TYPE, sha256: row.sha256!,
    missing: () => new AssayError("not_found", `${what} ${row.id} is recorded as ready but its file is missing; request a new one`, { runId }),
  });
}

/**
 * The archives: GET /artifacts/exports/{export_id}/{file_name} (runs:read) and
 * GET /artifacts/calibration-exports/{id}/{file_name} (calibration:export).
 */
export function exportDownloadRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/exports/:exportId/:fileName", async (req, res) => {
    const row = await requireExport(deps, authOf(res).accountId, req.params.exportId);
    await sendArchive(deps, req, res, "export", `/v1/exports/${row.id}`, row, exportView(row, deps.urls.artifactUrl, deps.clock()), req.params.fileName);
  });

  router.get("/calibration-exports/:calibrationExportId/:fileName", async (req, res) => {
    const row = await requireCalibrationExport(deps, authOf(res).accountId, req.params.calibrationExportId);
    await sendArchive(deps, req, res, "calibration export", `/v1/calibration/exports/${row.id}`, row, calibrationExportView(row, deps.urls, deps.clock()), req.params.fileName);
  });

  return router;
}

/**
 * Run exports (scope runs:read: an export reads the run's recordings out, as downloading them does):
 * - POST /v1/runs/{run_id}/export: 202 with the Export in `preparing`; the archive worker makes it.
 * - GET /v1/exports/{export_id}: poll it (status, progress, file, expiry).
 * - GET /v1/runs/{run_id}/exports: the run's exports, newest first.
 * The archive itself is served under /artifacts/exports/{export_id}/{file_name} (exportDownloadRouter).
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { exportsRoot } from "../../exports/export-files.js";
import { exportView, requestRunExport } from "../../exports/run-exports.js";
import { getExport, listRunExports, type ExportRow } from "../../store/exports-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { ExportRequest } from "../schemas/exports.js";
import { parseBody } from "../validate-request.js";
import { requireRun } from "./runs.js";

function requireExport(deps: CompiledApiDeps, accountId: string, exportId: string): ExportRow {
  const row = getExport(deps.db, exportId);
  if (!row || row.account_id !== accountId) throw new AssayError("not_found", `no export ${JSON.stringify(exportId)} on this account`);
  return row;
}

export function exportsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.post("/runs/:runId/export", (req, res) => {
    const run = requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const { format } = parseBody(ExportRequest, req.body);
    const row = requestRunExport(deps.db, deps.artifactsDir, run, format, deps.clock());
    deps.archives.kick();
    res.status(202).location(`${deps.urls.baseUrl}/v1/exports/${row.id}`).json(exportView(row, deps.urls.artifactUrl, deps.clock()));
  });

  router.get("/runs/:runId/exports", (req, res) => {
    const run = requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const now = deps.clock();
    res.json({ object: "list", url: `/v1/runs/${run.id}/exports`, data: listRunExports(deps.db, run.id).map((row) => exportView(row, deps.urls.artifactUrl, now)) });
  });

  router.get("/exports/:exportId", (req, res) => {
    res.json(exportView(requireExport(deps, authOf(res).accountId, req.params.exportId), deps.urls.artifactUrl, deps.clock()));
  });

  return router;
}

/** GET /artifacts/exports/{export_id}/{file_name}: the archive of a ready export (Range requests supported). */
export function exportDownloadRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.get("/exports/:exportId/:fileName", async (req, res) => {
    const row = requireExport(deps, authOf(res).accountId, req.params.exportId);
    const view = exportView(row, deps.urls.artifactUrl, deps.clock());
    if (view.status === "expired") {
      throw new AssayError("retention_expired", `export ${row.id} expired (${(view.failure as { message: string }).message})`, { runId: row.run_id });
    }
    if (view.status !== "ready" || row.file_name !== req.params.fileName) {
      const why = view.status === "preparing" ? `is still preparing; poll GET /v1/exports/${row.id} until its status is ready`
        : view.status === "failed" ? `failed (${row.failure_message}); request a new export`
        : `has no file named ${JSON.stringify(req.params.fileName)}; use its download_url`;
      throw new AssayError("not_found", `export ${row.id} ${why}`, { runId: row.run_id });
    }
    const path = join(exportsRoot(deps.artifactsDir), row.id, row.file_name);
    if (!(await stat(path).catch(() => undefined))?.isFile()) throw new AssayError("not_found", `export ${row.id} is recorded as ready but its file is missing; request a new export`, { runId: row.run_id });
    res.set({ "Content-Disposition": `attachment; filename="${row.file_name}"`, "X-Content-SHA256": row.sha256! });
    await new Promise<void>((resolve, reject) => res.sendFile(path, { headers: { "Content-Type": "application/x-tar" }, dotfiles: "allow" }, (error) => (error && !res.headersSent ? reject(error) : resolve())));
  });

  return router;
}

/**
 * Artifact files: GET /artifacts/runs/:runId/episodes/:episodeId/:fileName, bearer key with
 * runs:read on the run's account. 404 not_found until stored; 410 retention_expired once purged
 * or past the run's data.retention (counted from when the file was stored).
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { isPastRetention, retentionOfRequest } from "../../data/purge.js";
import { AssayError } from "../../errors/assay-error.js";
import { listArtifacts } from "../../store/artifacts-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

const CONTENT_TYPES: Record<string, string> = { ".mcap": "application/octet-stream", ".mp4": "video/mp4", ".json": "application/json" };

export function artifactsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.get("/runs/:runId/episodes/:episodeId/:fileName", async (req, res) => {
    const { runId, episodeId, fileName } = req.params;
    const run = requireRun(deps.db, authOf(res).accountId, runId);
    const artifact = listArtifacts(deps.db, run.id).find((a) => a.episode_id === episodeId && a.file_name === fileName);
    if (!artifact || artifact.status === "pending") {
      throw new AssayError("not_found", `no stored artifact ${JSON.stringify(fileName)} for episode ${episodeId}`, { runId: run.id });
    }
    if (artifact.status === "purged" || isPastRetention(artifact.stored_at, retentionOfRequest(run.request), deps.clock())) {
      throw new AssayError("retention_expired", `artifact ${fileName} of episode ${episodeId} was purged (retention ${JSON.stringify((run.request as { data?: { retention?: string } }).data?.retention)})`, { runId: run.id });
    }
    // Names come from the store, never from the URL, so a crafted path cannot leave the store.
    const path = join(deps.artifactsDir, artifact.run_id, artifact.episode_id, artifact.file_name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) throw new AssayError("not_found", `artifact ${fileName} of episode ${episodeId} is recorded but its file is missing`, { runId: run.id });
    const extension = artifact.file_name.slice(artifact.file_name.lastIndexOf("."));
    res.set({
      "Content-Type": CONTENT_TYPES[extension] ?? "application/octet-stream",
      "Content-Length": String(info.size),
      "Content-Disposition": `attachment; filename="${artifact.file_name.replace(/"/g, "")}"`,
      "X-Content-SHA256": artifact.sha256,
    });
    await pipeline(createReadStream(path), res);
  });

  return router;
}

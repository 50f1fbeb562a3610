/**
 * Artifact files: GET /artifacts/runs/:runId/episodes/:episodeId/:fileName, bearer key with
 * runs:read on the run's account. 404 not_found until stored; 410 retention_expired once purged
 * or past the run's data.retention (counted from when the file was stored). A stored file is a 302
 * to a short-lived presigned URL when the artifacts are in a bucket, else streamed (send-object.ts).
 */
import { Router } from "express";
import { artifactKey, contentTypeOf } from "../../artifacts/artifact-store.js";
import { authOf } from "../../auth/authenticate.js";
import { isPastRetention, retentionOfRequest } from "../../data/purge.js";
import { AssayError } from "../../errors/assay-error.js";
import { findArtifactFile } from "../../store/artifacts-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { sendObject } from "../send-object.js";
import { requireRun } from "./runs.js";

export function artifactsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/runs/:runId/episodes/:episodeId/:fileName", async (req, res) => {
    const { runId, episodeId, fileName } = req.params;
    const run = await requireRun(deps.db, authOf(res).accountId, runId);
    const artifact = await findArtifactFile(deps.db, run.id, episodeId, fileName);
    if (!artifact || artifact.status === "pending") {
      throw new AssayError("not_found", `no stored artifact ${JSON.stringify(fileName)} for episode ${episodeId}`, { runId: run.id });
    }
    if (artifact.status === "purged" || isPastRetention(artifact.stored_at, retentionOfRequest(run.request), deps.clock())) {
      throw new AssayError("retention_expired", `artifact ${fileName} of episode ${episodeId} was purged (retention ${JSON.stringify((run.request as { data?: { retention?: string } }).data?.retention)})`, { runId: run.id });
    }
    // Names come from the store, never from the URL, so a crafted path cannot leave the store.
    await sendObject(deps.objects, req, res, {
      key: artifactKey({ runId: artifact.run_id, episodeId: artifact.episode_id, fileName: artifact.file_name }),
      fileName: artifact.file_name,
      contentType: contentTypeOf(artifact.file_name),
      sha256: artifact.sha256,
      missing: () => new AssayError("not_found", `artifact ${fileName} of episode ${episodeId} is recorded but its file is missing`, { runId: run.id }),
    });
  });

  return router;
}

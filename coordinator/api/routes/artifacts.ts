/**
 * Artifact files: GET /artifacts/runs/:runId/episodes/:episodeId/:fileName, bearer key with
 * runs:read on the run's account. 404 not_found until stored (a file its cell has not uploaded says
 * which cell, since when, and whether its run completed without it); 410 retention_expired once purged
 * or past the run's data.retention (counted from when the file was stored). A stored file is a 302
 * to a short-lived presigned URL when the artifacts are in a bucket, else streamed (send-object.ts).
 */
import { Router } from "express";
import { artifactKey, contentTypeOf } from "../../artifacts/artifact-store.js";
import { authOf } from "../../auth/authenticate.js";
import { isPastRetention, retentionOfRequest } from "../../data/purge.js";
import { AssayError } from "../../errors/assay-error.js";
import { findArtifactFile, type ArtifactRow } from "../../store/artifacts-repo.js";
import { getEpisode } from "../../store/episodes-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { sendObject } from "../send-object.js";
import { requireRun } from "./runs.js";

export function artifactsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/runs/:runId/episodes/:episodeId/:fileName", async (req, res) => {
    const { runId, episodeId, fileName } = req.params;
    const run = await requireRun(deps.db, authOf(res).accountId, runId);
    const artifact = await findArtifactFile(deps.db, run.id, episodeId, fileName);
    if (!artifact) {
      throw new AssayError("not_found", `no stored artifact ${JSON.stringify(fileName)} for episode ${episodeId}`, { runId: run.id });
    }
    if (artifact.status === "pending") throw await notUploaded(deps, artifact);
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

/** The 404 for a file its cell announced and has not uploaded: which cell, since when, and what to do. */
async function notUploaded(deps: CompiledApiDeps, artifact: ArtifactRow): Promise<AssayError> {
  const episode = await getEpisode(deps.db, artifact.episode_id);
  const cell = episode?.cell_id ? `cell ${episode.cell_id}` : "its cell";
  const finished = episode?.finished_at ? ` when the episode finished at ${episode.finished_at}` : "";
  const message = artifact.missing_since
    ? `${artifact.file_name} of episode ${artifact.episode_id} was never uploaded: ${cell} announced it${finished} and had not uploaded it when the run ` +
      `completed without it at ${artifact.missing_since} (recorded missing). If the cell's disk still holds it, start the cell's agent (or restore its link): ` +
      `it uploads the file on reconnecting, and this URL serves it from then on`
    : `${artifact.file_name} of episode ${artifact.episode_id} is not uploaded yet: ${cell} announced it${finished} and is still to upload it. ` +
      `Try again later; the run completes once its recordings are stored (its status_detail says which cell holds how many)`;
  return new AssayError("not_found", message, { runId: artifact.run_id });
}

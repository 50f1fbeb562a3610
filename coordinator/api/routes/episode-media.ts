/**
 * What the console shows of one episode besides its files, read from its stored MCAP (docs/api.md,
 * "Episode media"); scope runs:read, like the files:
 * - GET /v1/runs/{run_id}/episodes/{episode_id}/series: the joint time series, downsampled to at most
 *   max_points points (coordinator/artifacts/episode-series.ts);
 * - GET /v1/runs/{run_id}/episodes/{episode_id}/thumbnail: a JPEG still of one camera, its last frame
 *   by default (coordinator/artifacts/episode-thumbnail.ts), cached in memory (bounded), with an ETag.
 * 404 not_found for an unknown episode, one without a stored MCAP, or a camera the recording lacks;
 * 410 retention_expired once the recording was purged; 422 for a recording that cannot be read.
 */
import { Router, type Response } from "express";
import { artifactKey } from "../../artifacts/artifact-store.js";
import { DEFAULT_SERIES_POINTS, readEpisodeSeries } from "../../artifacts/episode-series.js";
import { authOf } from "../../auth/authenticate.js";
import { isPastRetention, retentionOfRequest } from "../../data/purge.js";
import { AssayError } from "../../errors/assay-error.js";
import { objectReadable } from "../../storage/object-readable.js";
import { getArtifact } from "../../store/artifacts-repo.js";
import { getEpisode } from "../../store/episodes-repo.js";
import type { RunRecord } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { EpisodeSeriesQuery, ThumbnailQuery } from "../schemas/runs.js";
import { parseQuery } from "../validate-request.js";
import { requireRun } from "./runs.js";

export function episodeMediaRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  /** The episode's stored MCAP, or the error that says why there is none. */
  async function recordingOf(run: RunRecord, episodeId: string) {
    const episode = await getEpisode(deps.db, episodeId);
    if (!episode || episode.run_id !== run.id) {
      throw new AssayError("not_found", `run ${run.id} has no episode ${JSON.stringify(episodeId.slice(0, 64))}`, { runId: run.id });
    }
    const mcap = await getArtifact(deps.db, episode.id, "mcap");
    if (!mcap || mcap.status === "pending") {
      throw new AssayError("not_found", `episode ${episode.id} has no stored recording yet (it is uploaded after the episode finishes)`, { runId: run.id });
    }
    if (mcap.status === "purged" || isPastRetention(mcap.stored_at, retentionOfRequest(run.request), deps.clock())) {
      throw new AssayError("retention_expired", `the recording of episode ${episode.id} was purged (retention ${JSON.stringify((run.request as { data?: { retention?: string } }).data?.retention)})`, { runId: run.id });
    }
    const readable = objectReadable(deps.objects, artifactKey({ runId: mcap.run_id, episodeId: mcap.episode_id, fileName: mcap.file_name }), mcap.bytes);
    return { episode, mcap, readable };
  }

  /** A recording that is not a readable MCAP is the cell's fault, not the caller's: said plainly, never a 500. */
  const unreadable = (runId: string, episodeId: string, error: unknown) =>
    new AssayError("contract_validation_failed", `the recording of episode ${episodeId} could not be read as an MCAP: ${String((error as Error)?.message ?? error).slice(0, 200)}`, { runId });

  router.get("/runs/:runId/episodes/:episodeId/series", async (req, res: Response) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const { max_points } = parseQuery(EpisodeSeriesQuery, req);
    const { episode, readable } = await recordingOf(run, req.params.episodeId);
    let series;
    try {
      series = await readEpisodeSeries(readable, max_points ?? DEFAULT_SERIES_POINTS);
    } catch (error) {
      throw unreadable(run.id, episode.id, error);
    }
    res.json({
      object: "episode_series", episode_id: episode.id, index: episode.idx, joint_names: series.jointNames, steps: series.steps,
      points: series.tS.length, t_s: series.tS, measured: series.measured, commanded: series.commanded, events: series.events,
    });
  });

  router.get("/runs/:runId/episodes/:episodeId/thumbnail", async (req, res: Response) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const { camera, at } = parseQuery(ThumbnailQuery, req);
    const { episode, mcap, readable } = await recordingOf(run, req.params.episodeId);
    const etag = `"${mcap.sha256.slice(0, 32)}-${camera ?? ""}-${at ?? "last"}"`;
    if (req.headers["if-none-match"] === etag) {
      res.status(304).end();
      return;
    }
    let answer;
    try {
      answer = await deps.thumbnails.thumbnail({ sha256: mcap.sha256, readable, camera, at: at ?? "last" });
    } catch (error) {
      throw unreadable(run.id, episode.id, error);
    }
    if ("missing" in answer) throw new AssayError("not_found", `no thumbnail for episode ${episode.id}: ${answer.missing}`, { runId: run.id });
    // Cache-Control stays the API's no-store (docs/security.md, "Secrets in caches"): the coordinator caches the stills.
    res.set({ "Content-Type": "image/jpeg", ETag: etag, "X-Assay-Camera": answer.camera }).send(answer.jpeg);
  });

  return router;
}

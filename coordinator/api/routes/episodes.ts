/**
 * GET /v1/runs/{run_id}/episodes: finished episodes (those with an outcome; filtered by outcome,
 * failure cluster and the last stage reached), or with
 * `artifact=<kind>` the run's artifact files of that kind (what Result.artifacts URLs point to).
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { artifactView, episodeView } from "../../lifecycle/run-view.js";
import { listArtifacts } from "../../store/artifacts-repo.js";
import { listEpisodes } from "../../store/episodes-repo.js";
import { lastStageOf } from "../../runs/stage-funnel.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { EpisodeListQuery } from "../schemas/runs.js";
import { parseQuery } from "../validate-request.js";
import { requireRun } from "./runs.js";
import { kindModule } from "../../kinds/registry.js";

export function episodesRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/runs/:runId/episodes", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const { outcome, cluster, stage, artifact } = parseQuery(EpisodeListQuery, req);
    const url = `/v1/runs/${run.id}/episodes`;
    const episodes = (await listEpisodes(deps.db, run.id, { outcome, cluster }))
      .filter((e) => e.outcome !== null && (stage === undefined || (lastStageOf(e.evaluation) ?? "none") === stage));
    const artifacts = await listArtifacts(deps.db, run.id);
    if (artifact) {
      const indexOf = new Map(episodes.map((e) => [e.id, e.idx]));
      const data = artifacts
        .filter((a) => a.kind === artifact && indexOf.has(a.episode_id))
        .map((a) => artifactView(a, indexOf.get(a.episode_id) as number, deps.urls.artifactUrl));
      res.json({ object: "list", url, data });
      return;
    }
    // Each view is given its episode's rows only: with the run's whole list every view searched every row, so a
    // listing grew with the square of the run's size (10,000 episodes: 5 s on the event loop).
    const artifactsOf = new Map<string, typeof artifacts>();
    for (const a of artifacts) {
      const rows = artifactsOf.get(a.episode_id);
      if (rows) rows.push(a);
      else artifactsOf.set(a.episode_id, [a]);
    }
    const withUnit = kindModule(run.kind).traits.hasUnits;
    res.json({ object: "list", url, data: episodes.map((e) => episodeView(e, artifactsOf.get(e.id) ?? [], deps.urls.artifactUrl, withUnit, deps.urls.baseUrl)) });
  });

  return router;
}

/** POST /v1/runs/{run_id}/episodes/{episode_id}/replay: a new run reproducing one episode. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { replayRunBody, replayRunShape, replaySpecOf } from "../../replay/replay-run.js";
import { runView } from "../../lifecycle/run-view.js";
import { submitRun } from "../../lifecycle/submit-run.js";
import { getEpisodeRecord } from "../../store/episodes-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { ReplayRequest } from "../schemas/runs.js";
import { parseBody } from "../validate-request.js";
import { requireRun } from "./runs.js";

export function replayRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.post("/runs/:runId/episodes/:episodeId/replay", async (req, res) => {
    const { accountId } = authOf(res);
    const original = await requireRun(deps.db, accountId, req.params.runId);
    const episode = await getEpisodeRecord(deps.db, req.params.episodeId);
    if (!episode || episode.runId !== original.id) {
      throw new AssayError("not_found", `run ${original.id} has no episode ${JSON.stringify(req.params.episodeId)}`, { runId: original.id });
    }
    const request = parseBody(ReplayRequest, req.body, { emptyIsObject: true });
    const replaySpec = replaySpecOf(episode);
    // Validated as a new run of the original body (every check a run gets), then reshaped so every
    // episode reproduces the original one.
    const { run } = await submitRun(deps, accountId, replayRunBody(original, request), {
      reshape: (validated) => replayRunShape(validated, original, episode, replaySpec, request.count ?? 1),
    });
    res.status(201).json(runView(run));
  });

  return router;
}

/** POST /v1/runs/{run_id}/episodes/{episode_id}/replay: a new run reproducing one episode. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { randomBase62 } from "../../auth/api-keys.js";
import { admitSubmission } from "../../billing/submission.js";
import { AssayError } from "../../errors/assay-error.js";
import { parseReplayRequest, replayRunBody, replayRunShape, replaySpecOf } from "../../replay/replay-run.js";
import { runView } from "../../runs/run-view.js";
import { validateRunRequest } from "../../runs/validate-run.js";
import { getAccount } from "../../store/accounts-repo.js";
import { getEpisode } from "../../store/episodes-repo.js";
import { insertRun } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

export function replayRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.post("/runs/:runId/episodes/:episodeId/replay", (req, res) => {
    const { accountId } = authOf(res);
    const original = requireRun(deps.db, accountId, req.params.runId);
    const episode = getEpisode(deps.db, req.params.episodeId);
    if (!episode || episode.run_id !== original.id) {
      throw new AssayError("not_found", `run ${original.id} has no episode ${JSON.stringify(req.params.episodeId)}`, { runId: original.id });
    }
    const request = parseReplayRequest(req.body);
    const replaySpec = replaySpecOf(episode);
    const validated = validateRunRequest(replayRunBody(original, request), {
      db: deps.db,
      pins: deps.pins,
      environments: deps.environments,
      fleet: deps.fleet,
      accountId,
      leaderboardOptIn: getAccount(deps.db, accountId)?.leaderboard_opt_in === 1,
    });
    admitSubmission(deps.db, deps.pins, accountId, validated, undefined, deps.clock());
    const { plan, episodes } = replayRunShape(validated, episode, replaySpec, request.count);
    const id = `run_${randomBase62(20)}`;
    insertRun(deps.db, {
      id,
      accountId,
      kind: "run",
      created: deps.clock().toISOString(),
      request: validated.request,
      resolvedPins: validated.resolvedPins,
      plan,
      priority: validated.priority,
      episodesTotal: episodes.length,
      episodes,
    });
    deps.scheduler.kick();
    res.status(201).json(runView(requireRun(deps.db, accountId, id)));
  });

  return router;
}

/**
 * POST /v1/runs/{run_id}/checkpoints (runs:write): the customer's training pipeline pushes a new
 * policy checkpoint to an iterating threshold run (see coordinator/kinds/threshold.ts). Body
 * `{policy}`, checked against the run's soak robot and environment like any policy. Returns 202.
 */
import { Router } from "express";
import { findEnvironment } from "../../catalog/environments.js";
import { authOf } from "../../auth/authenticate.js";
import { pushCheckpoint } from "../../kinds/threshold.js";
import { contract } from "../../runs/field-checks.js";
import { validatePolicy } from "../../runs/policy-checks.js";
import { checkPolicyModels, preparationContextOf, preparePolicies } from "../../models/policy-preparation.js";
import { addPinnedModels, getRun, lockRun } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { CheckpointRequest } from "../schemas/runs.js";
import { parseBody } from "../validate-request.js";
import { requireRun } from "./runs.js";
import { transact } from "../../store/tx.js";
import { kindModule } from "../../kinds/registry.js";

export function checkpointsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.post("/runs/:runId/checkpoints", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const body = parseBody(CheckpointRequest, req.body);
    const soak = run.units[0];
    if (!kindModule(run.kind).traits.acceptsCheckpoints || !soak) contract(`run ${run.id} is kind ${run.kind}; checkpoints go to a threshold run`);
    const model = deps.pins.models.find((m) => m.id === soak.model)!;
    await validatePolicy(body.policy, model, findEnvironment(deps.environments, soak.environment)!, soak.firmware, deps.fleet);
    // A checkpoint policy's model resolves and fits, an endpoint answers its pre-flight, before the push counts.
    const unit = { ...soak, policy: body.policy as Record<string, unknown> };
    const preparation = preparationContextOf(deps, run.accountId);
    await checkPolicyModels([unit], preparation);
    const models = await preparePolicies([unit], preparation);
    if (Object.keys(models).length > 0) await addPinnedModels(deps.db, run.id, models);
    const pushed = await transact(deps.db, async (tx) => {
      await lockRun(tx, run.id);
      return pushCheckpoint(tx, (await getRun(tx, run.id))!, body.policy as Record<string, unknown>, deps.clock());
    });
    deps.scheduler.kick();
    res.status(202).json({ object: "checkpoint", run_id: run.id, index: pushed.checkpoints - 1, from_episode: pushed.from_index, policy: body.policy });
  });

  return router;
}

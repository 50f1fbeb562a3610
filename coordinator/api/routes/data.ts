/**
 * DELETE /v1/data/{run_id} (data:purge): deletes every recording of an ended run and returns a
 * purge receipt; afterwards the run's artifact URLs answer 410 retention_expired.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { purgeReceiptView, purgeRunArtifacts } from "../../data/purge.js";
import { AssayError } from "../../errors/assay-error.js";
import { isTerminal } from "../../domain/run-state.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

export function dataRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.delete("/data/:runId", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    if (!isTerminal(run.status)) {
      throw new AssayError("contract_validation_failed", `run ${run.id} is ${run.status}; its recordings can be purged once it has completed, failed or stopped`, { runId: run.id });
    }
    const receipt = await purgeRunArtifacts(deps.db, deps.objects, { id: run.id, account_id: run.accountId }, deps.clock());
    res.status(200).json(purgeReceiptView(receipt));
  });

  return router;
}

/**
 * GET /v1/runs/{run_id}/result (runs:read): the run's Result. Completed: 200 with the Result. A
 * run that ended without completing answers its stop's error (status_detail.code: e.g. 402
 * budget_exceeded) with the partial Result in `error.partial_result` (n and ci95 describe the
 * episodes that ran); a run cancelled on request answers 200 with that partial Result. An open run
 * has no result yet: 404 not_found.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import { isErrorCode } from "../../errors/codes.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

export function runResultRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/runs/:runId/result", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const result = run.result;
    if (run.status === "completed" && result) {
      res.json(result);
      return;
    }
    // Cancelled on request: no error happened; the Result of the episodes that ran is the answer.
    if (run.status === "stopped" && !run.statusCode && result) {
      res.json(result);
      return;
    }
    if (run.status === "stopped" || run.status === "failed") {
      const code = run.statusCode && isErrorCode(run.statusCode) ? run.statusCode : "contract_validation_failed";
      throw new AssayError(code, run.statusMessage ?? `run ${run.id} ${run.status}`, { runId: run.id, details: { partial_result: result } });
    }
    throw new AssayError("not_found", `run ${run.id} is ${run.status} and has no result yet; watch GET /v1/runs/${run.id}/events`, { runId: run.id });
  });

  return router;
}

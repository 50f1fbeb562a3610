/** POST /v1/runs, GET /v1/runs, GET /v1/runs/{run_id}. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { splitQuoteId } from "../../billing/submission.js";
import { AssayError } from "../../errors/assay-error.js";
import { isTerminal } from "../../runs/run-state.js";
import { runView } from "../../runs/run-view.js";
import { submitRun } from "../../runs/submit-run.js";
import type { Db } from "../../store/database.js";
import { getRun, listRuns, type RunRecord } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { LIST_LIMIT_DEFAULT } from "../schemas/common.js";
import { RunListQuery } from "../schemas/runs.js";
import { parseQuery } from "../validate-request.js";

const IDEMPOTENCY_KEY_MAX = 255;

/** The account's run, or 404 not_found (another account's run is indistinguishable from none). */
export function requireRun(db: Db, accountId: string, runId: string): RunRecord {
  const row = getRun(db, runId);
  if (!row || row.accountId !== accountId) throw new AssayError("not_found", `no run ${JSON.stringify(runId)} on this account`, { runId });
  return row;
}

export function runsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.post("/runs", async (req, res) => {
    const { accountId } = authOf(res);
    // quote_id names the quote backing the submission; the rest is the run body.
    const { body, quoteId } = splitQuoteId(req.body);
    const key = req.get("idempotency-key");
    if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
      throw new AssayError("contract_validation_failed", `Idempotency-Key must be 1..${IDEMPOTENCY_KEY_MAX} characters; got ${key.length}`);
    }
    const { run, replayed } = await submitRun(deps, accountId, body, { idempotencyKey: key, quoteId });
    if (replayed) return void res.status(200).set("Idempotent-Replayed", "true").json(runView(run));
    res.status(201).json(runView(run));
  });

  router.get("/runs", (req, res) => {
    const { accountId } = authOf(res);
    const query = parseQuery(RunListQuery, req);
    const { kind, status } = query;
    const limit = query.limit ?? LIST_LIMIT_DEFAULT;
    const startingAfter = query.starting_after;
    if (startingAfter !== undefined) requireRun(deps.db, accountId, startingAfter);
    const rows = listRuns(deps.db, { accountId, kind, status, limit: limit + 1, before: startingAfter });
    res.json({ object: "list", url: "/v1/runs", has_more: rows.length > limit, data: rows.slice(0, limit).map((row) => runView(row, { waiting: deps.scheduler.waitingReason?.(row.id) })) });
  });

  router.post("/runs/:runId/cancel", (req, res) => {
    const { accountId, keyId } = authOf(res);
    const run = requireRun(deps.db, accountId, req.params.runId);
    if (isTerminal(run.status)) {
      throw new AssayError("contract_validation_failed", `run ${run.id} is already ${run.status}; only a queued, scheduling or running run can be cancelled`, { runId: run.id });
    }
    deps.endRun(run.id, { status: "stopped", message: `cancelled on request (key ${keyId})` });
    res.json(runView(getRun(deps.db, run.id)!));
  });

  router.get("/runs/:runId", (req, res) => {
    const run = requireRun(deps.db, authOf(res).accountId, req.params.runId);
    res.json(runView(run, { waiting: deps.scheduler.waitingReason?.(run.id) }));
  });

  return router;
}

/** POST /v1/runs, GET /v1/runs, GET /v1/runs/{run_id}. */
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { randomBase62 } from "../../auth/api-keys.js";
import { admitSubmission, splitQuoteId } from "../../billing/submission.js";
import { AssayError } from "../../errors/assay-error.js";
import { RUN_STATUSES } from "../../runs/run-state.js";
import { runView } from "../../runs/run-view.js";
import { normalizeRunRequest, RUN_KINDS } from "../../runs/run-request.js";
import { validateRunRequest } from "../../runs/validate-run.js";
import { getAccount } from "../../store/accounts-repo.js";
import type { Db } from "../../store/database.js";
import { findRunByIdempotencyKey, getRunRow, insertRun, listRunRows, type RunRow } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { queryEnum, queryInteger, queryString } from "../query.js";

export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;
const IDEMPOTENCY_KEY_MAX = 255;

/** JSON with object keys sorted, so two bodies compare equal regardless of key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The account's run, or 404 not_found (another account's run is indistinguishable from none). */
export function requireRun(db: Db, accountId: string, runId: string): RunRow {
  const row = getRunRow(db, runId);
  if (!row || row.account_id !== accountId) throw new AssayError("not_found", `no run ${JSON.stringify(runId)} on this account`, { runId });
  return row;
}

function replay(res: Response, original: RunRow, body: unknown, key: string): void {
  const sameBody = typeof body === "object" && body !== null && !Array.isArray(body)
    && canonicalJson(normalizeRunRequest(body as Record<string, unknown>)) === original.request;
  if (!sameBody) {
    throw new AssayError("contract_validation_failed", `Idempotency-Key ${JSON.stringify(key)} was already used for run ${original.id} with a different body; send a new key for a new run`, { runId: original.id });
  }
  res.status(200).set("Idempotent-Replayed", "true").json(runView(original));
}

export function runsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.post("/runs", (req, res) => {
    const { accountId } = authOf(res);
    // quote_id names the quote backing the submission; the rest is the run body.
    const { body, quoteId } = splitQuoteId(req.body);
    const key = req.get("idempotency-key");
    if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
      throw new AssayError("contract_validation_failed", `Idempotency-Key must be 1..${IDEMPOTENCY_KEY_MAX} characters; got ${key.length}`);
    }
    if (key) {
      const original = findRunByIdempotencyKey(deps.db, accountId, key);
      if (original) return replay(res, original, body, key);
    }
    const validated = validateRunRequest(body, {
      db: deps.db,
      pins: deps.pins,
      environments: deps.environments,
      fleet: deps.fleet,
      accountId,
      leaderboardOptIn: getAccount(deps.db, accountId)?.leaderboard_opt_in === 1,
    });
    admitSubmission(deps.db, deps.pins, accountId, validated, quoteId, deps.clock());
    const id = `run_${randomBase62(20)}`;
    // The stored request is canonical JSON so an Idempotency-Key replay compares by string.
    const request = JSON.parse(canonicalJson(validated.request)) as Record<string, unknown>;
    insertRun(deps.db, {
      id,
      accountId,
      kind: validated.kind,
      created: deps.clock().toISOString(),
      request,
      resolvedPins: validated.resolvedPins,
      plan: validated.plan,
      priority: validated.priority,
      episodesTotal: validated.episodesTotal,
      idempotencyKey: key ?? null,
      units: validated.units,
      episodes: validated.episodes,
      kindState: validated.kindState,
    });
    deps.scheduler.kick();
    res.status(201).json(runView(requireRun(deps.db, accountId, id)));
  });

  router.get("/runs", (req, res) => {
    const { accountId } = authOf(res);
    const kind = queryEnum(req, "kind", RUN_KINDS);
    const status = queryEnum(req, "status", RUN_STATUSES);
    const limit = queryInteger(req, "limit", LIST_LIMIT_DEFAULT, 1, LIST_LIMIT_MAX);
    const startingAfter = queryString(req, "starting_after");
    if (startingAfter !== undefined) requireRun(deps.db, accountId, startingAfter);
    const rows = listRunRows(deps.db, { accountId, kind, status, limit: limit + 1, before: startingAfter });
    res.json({ object: "list", url: "/v1/runs", has_more: rows.length > limit, data: rows.slice(0, limit).map(runView) });
  });

  router.get("/runs/:runId", (req, res) => {
    res.json(runView(requireRun(deps.db, authOf(res).accountId, req.params.runId)));
  });

  return router;
}

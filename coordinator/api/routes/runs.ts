/** POST /v1/runs, GET /v1/runs, GET /v1/runs/{run_id}, POST /v1/runs/{run_id} (name and metadata). */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { splitQuoteId } from "../../billing/submission.js";
import { AssayError } from "../../errors/assay-error.js";
import { prepareJson, sendPreparedJson } from "../../http/prepared-json.js";
import { isTerminal } from "../../domain/run-state.js";
import { runView, type RunWait } from "../../lifecycle/run-view.js";
import { RunViewBodies } from "../../lifecycle/run-view-bodies.js";
import { submitRun } from "../../lifecycle/submit-run.js";
import { listPendingArtifactsByCell } from "../../store/artifacts-repo.js";
import type { Db } from "../../store/database.js";
import { hasOpenEpisodes } from "../../store/episodes-repo.js";
import { getRun, getRunView, type RunRecord, type StoredRunViewRecord } from "../../store/runs-repo.js";
import { listRuns, setRunLabels } from "../../store/run-list-repo.js";
import { mergeMetadata, metadataKeyProblem, METADATA_KEYS_MAX, UpdateRunRequest } from "../../runs/run-labels.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { LIST_LIMIT_DEFAULT } from "../schemas/common.js";
import { RunListQuery } from "../schemas/runs.js";
import { parseBody, parseWith } from "../validate-request.js";

const IDEMPOTENCY_KEY_MAX = 255;

/** The account's run, or 404 not_found (another account's run is indistinguishable from none). */
export function requireRun(db: Db, accountId: string, runId: string): Promise<RunRecord> {
  // A promise chain, not an async function: one promise fewer on every read of a run (issue 29).
  return getRun(db, runId).then((row) => ownedRun(row, accountId, runId));
}

/** requireRun for a run's view: what GET /v1/runs/{run_id} shows, read and parsed alone. */
function requireRunView(db: Db, accountId: string, runId: string): Promise<StoredRunViewRecord> {
  return getRunView(db, runId).then((row) => ownedRun(row, accountId, runId));
}

function ownedRun<T extends { accountId: string }>(row: T | undefined, accountId: string, runId: string): T {
  if (!row || row.accountId !== accountId) throw new AssayError("not_found", `no run ${JSON.stringify(runId)} on this account`, { runId });
  return row;
}

/**
 * The runs routes, on `router` (a new Router by default). app.ts registers them on the /v1 router itself, so
 * that a request for them enters one router fewer, and a /v1 request for another route does not enter and
 * leave a router of its own first (router 2.x leaves a router that matched nothing through a setImmediate).
 */
export function runsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  // Each run's view as a prepared answer (bytes, length, ETag), made again only when the run reads differently.
  const viewBodies = new RunViewBodies(prepareJson);

  // The most requested route, first: a request is matched against each route before the one that takes it (the
  // method is checked after the path), and no other route of this router answers a GET or HEAD of /runs/:runId.
  // A promise chain, not an async function (issue 29); express passes a rejection to the error handler.
  router.get("/runs/:runId", (req, res) => requireRunView(deps.db, authOf(res).accountId, req.params.runId).then((run) => {
    sendPreparedJson(req, res, viewBodies.bodyOf(run, { waiting: waitingOf(deps, run.id) }));
  }));

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

  router.get("/runs", async (req, res) => {
    const { accountId } = authOf(res);
    const query = parseWith(RunListQuery, runListQueryOf(req.query as Record<string, unknown>), { prefix: "query parameter " });
    const { kind, status, task, robot, policy_name: policy, metadata } = query;
    const limit = query.limit ?? LIST_LIMIT_DEFAULT;
    const startingAfter = query.starting_after;
    if (startingAfter !== undefined) await requireRun(deps.db, accountId, startingAfter);
    const rows = await listRuns(deps.db, { accountId, kind, status, task, robot, policy, metadata, limit: limit + 1, before: startingAfter });
    res.json({ object: "list", url: "/v1/runs", has_more: rows.length > limit, data: rows.slice(0, limit).map((row) => runView(row, { waiting: waitingOf(deps, row.id) })) });
  });

  router.post("/runs/:runId/cancel", async (req, res) => {
    const { accountId, keyId } = authOf(res);
    const run = await requireRun(deps.db, accountId, req.params.runId);
    if (isTerminal(run.status)) {
      throw new AssayError("contract_validation_failed", `run ${run.id} is already ${run.status}; only a queued, scheduling or running run can be cancelled`, { runId: run.id });
    }
    await deps.endRun(run.id, { status: "stopped", message: `cancelled on request (key ${keyId})` });
    res.json(runView((await getRun(deps.db, run.id))!));
  });

  // The account's admin stops the wait for recordings its cells have not uploaded (docs/storage.md, "A bounded wait for recordings").
  router.post("/runs/:runId/complete-without-recordings", async (req, res) => {
    const { accountId, keyId } = authOf(res);
    const run = await requireRun(deps.db, accountId, req.params.runId);
    const refuse = (why: string) => new AssayError("contract_validation_failed", `run ${run.id} ${why}; only a running run whose episodes have all finished and that waits for recordings can complete without them`, { runId: run.id });
    if (run.status !== "running") throw refuse(`is ${run.status}`);
    if (await hasOpenEpisodes(deps.db, run.id)) throw refuse("still has episodes to run");
    if ((await listPendingArtifactsByCell(deps.db, run.id)).length === 0) throw refuse("waits for no recording (every one is stored)");
    if (!await deps.completeWithoutRecordings(run.id, `key ${keyId}`)) throw refuse(`could not complete now (it is ${(await getRun(deps.db, run.id))?.status})`);
    res.json(runView((await getRun(deps.db, run.id))!));
  });

  // Stripe's update: metadata keys sent are set ("" removes one), the name replaced ("" or null removes it).
  router.post("/runs/:runId", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const update = parseBody(UpdateRunRequest, req.body, { emptyIsObject: true });
    const name = update.name === undefined ? run.name ?? null : update.name === "" ? null : update.name;
    const metadata = update.metadata === undefined ? run.metadata ?? {} : mergeMetadata(run.metadata ?? {}, update.metadata, run.id);
    await setRunLabels(deps.db, run, { name, metadata });
    res.json(runView((await getRun(deps.db, run.id))!, { waiting: waitingOf(deps, run.id) }));
  });

  return router;
}

/**
 * The runs list's query with its `metadata[<key>]=<value>` parameters (Stripe's style; the query
 * parser keeps the brackets in the name) gathered into `metadata`, for RunListQuery. A key breaking
 * the metadata rules, a repeated parameter or more than 50 keys is 422 naming the parameter.
 */
function runListQueryOf(raw: Record<string, unknown>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const match = /^metadata\[(.*)\]$/s.exec(name);
    if (!match) {
      query[name] = value;
      continue;
    }
    const key = match[1]!;
    const problem = metadataKeyProblem(key);
    if (problem) throw new AssayError("contract_validation_failed", `query parameter ${name.length > 60 ? `${name.slice(0, 60)}...` : name}: ${problem}`);
    if (typeof value !== "string") throw new AssayError("contract_validation_failed", `query parameter metadata[${key}] must be given once as a plain value`);
    metadata[key] = value;
  }
  if (Object.keys(metadata).length > METADATA_KEYS_MAX) {
    throw new AssayError("contract_validation_failed", `query has ${Object.keys(metadata).length} metadata[...] filters; at most ${METADATA_KEYS_MAX}`);
  }
  if (Object.keys(metadata).length > 0) query.metadata = metadata;
  return query;
}

/** Why an open run waits, shown as its status_detail: an instrument no matching cell has, or recordings not uploaded. */
function waitingOf(deps: CompiledApiDeps, runId: string): RunWait | undefined {
  const instrument = deps.scheduler.waitingReason?.(runId);
  if (instrument !== undefined) return { for: "instrument", message: instrument };
  const recordings = deps.recordingWaits?.reason(runId);
  return recordings !== undefined ? { for: "recordings", message: recordings } : undefined;
}

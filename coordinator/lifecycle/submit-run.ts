/**
 * The one submission path for runs: POST /v1/runs, replays, CI gate checks and quotes all come
 * through here. `validateSubmission` is the kind's validation and plan for the account (what a
 * quote prices); `submitRun` adds the Idempotency-Key replay, the money checks (the quote it
 * names, the account's hard budget, `max_budget_usd` against one episode), the insert with the
 * request stored as canonical JSON, and the scheduler's kick.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { randomBase62 } from "../auth/api-keys.js";
import { admitSubmission } from "../billing/submission.js";
import { cameraNames, findEnvironment, type CatalogEnvironment } from "../catalog/environments.js";
import { AssayError } from "../errors/assay-error.js";
import type { FleetView } from "../cells/fleet-view.js";
import { canonicalJson } from "../json/canonical-json.js";
import { getAccount } from "../store/accounts-repo.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import type { RunUnit } from "../domain/units.js";
import type { RunBackfill } from "../runs/run-backfill.js";
import { findRunByIdempotencyKey, getRun, insertRun, runRecordOf, unitOfPlan, type NewEpisode, type RunPlan, type RunRecord } from "../store/runs-repo.js";
import { headlinePriorsAtSubmission } from "../runs/headline-priors.js";
import { isPlainObject } from "../runs/field-checks.js";
import { normalizeRunRequest, type ValidatedRun } from "../runs/run-request.js";
import { checkPolicyModels, preparationContextOf, preparePolicies } from "../models/policy-preparation.js";
import { validateRunRequest } from "./validate-run.js";
import { preflightJudge } from "../runs/judge-checks.js";
import { lockName } from "../store/named-lock.js";
import { labelsOfRequest } from "../runs/run-labels.js";
import { transact, type Tx } from "../store/tx.js";

export interface SubmissionContext {
  db: Db;
  pins: FirmwarePins;
  environments: readonly CatalogEnvironment[];
  fleet: FleetView;
  /** Woken after a run is inserted so it is matched to cells without waiting for a pass. */
  scheduler: { kick(): void };
  clock: () => Date;
  /** The artifact store, where uploaded and mirrored models are kept. */
  objects: ObjectStore;
  /** The operator's local model mirror; null: none. */
  modelMirror: string | null;
  /** Endpoint pre-flight at submission: its timeout, or "off". */
  preflight: { timeoutMs: number } | "off";
  /** Grants the loop turns a submission's heavy steps take, and inserts large runs' remaining episodes. */
  backfill: RunBackfill;
}

const preparationContext = (ctx: SubmissionContext, accountId: string) => preparationContextOf(ctx, accountId);

export interface SubmitOptions {
  /** The Idempotency-Key header: a retried submission with the same key returns the original run. */
  idempotencyKey?: string;
  /** `quote_id` of the body: the quote must be valid and match the body. */
  quoteId?: unknown;
  /** Replaces the planned run's plan and episodes (a replay reproduces one episode's conditions). */
  reshape?: (validated: ValidatedRun) => { plan: RunPlan; episodes: NewEpisode[] };
  /** Runs inside the insert's transaction with the new run's id (a gate check row commits with its run). */
  withinInsert?: (tx: Tx, runId: string, created: string) => Promise<void>;
}

export interface Submitted {
  run: RunRecord;
  /** True when an Idempotency-Key named an earlier run with the same body: nothing was inserted. */
  replayed: boolean;
}

/**
 * Validates and plans a run body for `accountId`, its checkpoint models included (no endpoint is
 * contacted: quotes use this); throws the spec's 4xx AssayError for the first problem.
 */
export async function validateSubmission(ctx: SubmissionContext, accountId: string, body: unknown): Promise<ValidatedRun> {
  const validated = await validateRunRequest(body, {
    db: ctx.db, pins: ctx.pins, environments: ctx.environments, fleet: ctx.fleet, accountId,
    leaderboardOptIn: (await getAccount(ctx.db, accountId))?.leaderboard_opt_in === 1,
  });
  await checkPolicyModels(unitsOf(validated), preparationContext(ctx, accountId));
  return validated;
}

/** The units a validated run will have once stored (kind `run` is planned without them). */
function unitsOf(validated: ValidatedRun): RunUnit[] {
  return validated.units ?? [unitOfPlan(validated.plan, validated.resolvedPins, validated.request)];
}

/** The run an Idempotency-Key already names, or undefined; 422 when it names one with another body. */
async function idempotentReplay(db: Db, accountId: string, key: string | undefined, body: unknown): Promise<RunRecord | undefined> {
  if (!key) return undefined;
  const original = await findRunByIdempotencyKey(db, accountId, key);
  if (!original) return undefined;
  const sameBody = isPlainObject(body) && canonicalJson(normalizeRunRequest(body)) === original.request;
  if (!sameBody) {
    throw new AssayError("contract_validation_failed", `Idempotency-Key ${JSON.stringify(key)} was already used for run ${original.id} with a different body; send a new key for a new run`, { runId: original.id });
  }
  return runRecordOf(original);
}

/**
 * Validates, admits, pre-flights, inserts and schedules a run (or returns the run an
 * Idempotency-Key names). The pre-flight of endpoint policies and the copy of mirrored models
 * happen between validation and insert, so a refused submission stores nothing.
 */
export async function submitRun(ctx: SubmissionContext, accountId: string, body: unknown, options: SubmitOptions = {}): Promise<Submitted> {
  const key = options.idempotencyKey;
  const replay = await idempotentReplay(ctx.db, accountId, key, body);
  if (replay) return { run: replay, replayed: true };
  // Validation and planning, and the insert below, each take a turn of their own: many large
  // submissions at once do not run back to back in one iteration of the event loop.
  await ctx.backfill.turn();
  const validated = await validateSubmission(ctx, accountId, body);
  await admitSubmission(ctx.db, ctx.pins, accountId, validated, options.quoteId, ctx.clock());
  const models = await preparePolicies(unitsOf(validated), preparationContext(ctx, accountId));
  if (ctx.preflight !== "off") await preflightRunJudge(ctx, validated);
  if (Object.keys(models).length > 0) validated.resolvedPins = { ...validated.resolvedPins, models };
  const shape = options.reshape?.(validated);
  const id = `run_${randomBase62(20)}`;
  const created = ctx.clock().toISOString();
  let backfill = false;
  let raced: RunRecord | undefined;
  let inserted: RunRecord | undefined;
  await ctx.backfill.turn();
  await transact(ctx.db, async (tx) => {
    // A request with the same key may have been inserted while this one was pre-flighting, here or
    // on another coordinator: checked again under a lock on the key, so only one inserts.
    if (key) await lockName(tx, `idempotency-key:${accountId}:${key}`);
    raced = await idempotentReplay(tx, accountId, key, body);
    if (raced) return;
    backfill = await insertRun(tx, {
      id,
      accountId,
      kind: validated.kind,
      created,
      // Canonical JSON, so an Idempotency-Key replay compares by string.
      request: JSON.parse(canonicalJson(validated.request)) as Record<string, unknown>,
      resolvedPins: validated.resolvedPins,
      plan: shape?.plan ?? validated.plan,
      priority: validated.priority,
      episodesTotal: shape ? shape.episodes.length : validated.episodesTotal,
      idempotencyKey: key ?? null,
      units: validated.units,
      episodes: shape?.episodes ?? validated.episodes,
      kindState: validated.kindState,
      // Fixed now, so that every Result of the run uses the priors it was submitted under.
      headlinePriors: await headlinePriorsAtSubmission(tx, unitsOf(validated)),
      labels: labelsOfRequest(validated.request),
    });
    await options.withinInsert?.(tx, id, created);
    // The run as created (`queued`, which the 201 answer shows): read before the scheduler is kicked, whose pass
    // may move it on before a read after the commit comes back.
    inserted = await getRun(tx, id);
  });
  if (raced) return { run: raced, replayed: true };
  ctx.scheduler.kick();
  // The rest of a large run's episodes, a transaction per turn of the event loop: other requests go on meanwhile.
  if (backfill) await ctx.backfill.complete(id);
  return { run: inserted!, replayed: false };
}

/** The judge's pre-flight (judge-checks.ts), showing it every camera of the run's first unit's scene. */
async function preflightRunJudge(ctx: SubmissionContext, validated: ValidatedRun): Promise<void> {
  const judge = validated.request.judge;
  if (judge === undefined || ctx.preflight === "off") return;
  const unit = unitsOf(validated)[0]!;
  const env = findEnvironment(ctx.environments, unit.environment);
  await preflightJudge(judge, { task: unit.task, cameras: env ? cameraNames(env) : [], maxTimeoutMs: ctx.preflight.timeoutMs });
}

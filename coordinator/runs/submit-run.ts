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
import type { CatalogEnvironment } from "../catalog/environments.js";
import { AssayError } from "../errors/assay-error.js";
import type { FleetView } from "../fleet/fleet-view.js";
import { canonicalJson } from "../json/canonical-json.js";
import { getAccount } from "../store/accounts-repo.js";
import type { Db } from "../store/database.js";
import { findRunByIdempotencyKey, getRun, insertRun, runRecordOf, type NewEpisode, type RunPlan, type RunRecord } from "../store/runs-repo.js";
import { isPlainObject } from "./field-checks.js";
import { normalizeRunRequest, type ValidatedRun } from "./run-request.js";
import { validateRunRequest } from "./validate-run.js";

export interface SubmissionContext {
  db: Db;
  pins: FirmwarePins;
  environments: readonly CatalogEnvironment[];
  fleet: FleetView;
  /** Woken after a run is inserted so it is matched to cells without waiting for a pass. */
  scheduler: { kick(): void };
  clock: () => Date;
}

export interface SubmitOptions {
  /** The Idempotency-Key header: a retried submission with the same key returns the original run. */
  idempotencyKey?: string;
  /** `quote_id` of the body: the quote must be valid and match the body. */
  quoteId?: unknown;
  /** Replaces the planned run's plan and episodes (a replay reproduces one episode's conditions). */
  reshape?: (validated: ValidatedRun) => { plan: RunPlan; episodes: NewEpisode[] };
  /** Runs inside the insert's transaction with the new run's id (a gate check row commits with its run). */
  withinInsert?: (runId: string, created: string) => void;
}

export interface Submitted {
  run: RunRecord;
  /** True when an Idempotency-Key named an earlier run with the same body: nothing was inserted. */
  replayed: boolean;
}

/** Validates and plans a run body for `accountId`; throws the spec's 4xx AssayError for the first problem. */
export function validateSubmission(ctx: SubmissionContext, accountId: string, body: unknown): ValidatedRun {
  return validateRunRequest(body, {
    db: ctx.db, pins: ctx.pins, environments: ctx.environments, fleet: ctx.fleet, accountId,
    leaderboardOptIn: getAccount(ctx.db, accountId)?.leaderboard_opt_in === 1,
  });
}

/** Validates, admits, inserts and schedules a run (or returns the run an Idempotency-Key names). */
export function submitRun(ctx: SubmissionContext, accountId: string, body: unknown, options: SubmitOptions = {}): Submitted {
  const key = options.idempotencyKey;
  if (key) {
    const original = findRunByIdempotencyKey(ctx.db, accountId, key);
    if (original) {
      const sameBody = isPlainObject(body) && canonicalJson(normalizeRunRequest(body)) === original.request;
      if (!sameBody) {
        throw new AssayError("contract_validation_failed", `Idempotency-Key ${JSON.stringify(key)} was already used for run ${original.id} with a different body; send a new key for a new run`, { runId: original.id });
      }
      return { run: runRecordOf(original), replayed: true };
    }
  }
  const validated = validateSubmission(ctx, accountId, body);
  admitSubmission(ctx.db, ctx.pins, accountId, validated, options.quoteId, ctx.clock());
  const shape = options.reshape?.(validated);
  const id = `run_${randomBase62(20)}`;
  const created = ctx.clock().toISOString();
  ctx.db.transaction(() => {
    insertRun(ctx.db, {
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
    });
    options.withinInsert?.(id, created);
  })();
  ctx.scheduler.kick();
  return { run: getRun(ctx.db, id)!, replayed: false };
}

/**
 * The Task Spec operations behind /v1/tasks: create, amend, pilot, freeze, revise. Each checks the
 * move with task-state.ts, validates with validate-task.ts and writes the tasks row in one
 * transaction. Routes stay thin; this module knows no HTTP.
 */
import { randomBase62 } from "../auth/api-keys.js";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { CatalogEnvironment } from "../catalog/environments.js";
import { AssayError } from "../errors/assay-error.js";
import type { Db } from "../store/database.js";
import { insertRun } from "../store/runs-repo.js";
import { headlinePriorsAtSubmission } from "../runs/headline-priors.js";
import {
  findReadableTaskById, findVisibleFrozenRevision, freezeTaskRow, getTask, insertTask, maxFrozenVersion,
  setTaskPilot, updateTaskSpec, type TaskRecord,
} from "../store/tasks-repo.js";
import { planPilot, type PlannedPilot } from "./pilot.js";
import { ensureServiceKey, ensureSigningKey } from "./signing-keys.js";
import { nextTaskStatus } from "./task-state.js";
import { canonicalJson } from "../json/canonical-json.js";
import { signTaskSpec } from "./task-signing.js";
import { storedSpec, taskRev, type TaskPilot } from "./task-view.js";
import { checkTaskAmendment, checkTaskBody, TASK_FIELDS, validateTaskSpec, type TaskField, type TaskSpecFields } from "./validate-task.js";
import { lockName } from "../store/named-lock.js";
import { transact } from "../store/tx.js";

export interface TaskContext {
  db: Db;
  accountId: string;
  environments: readonly CatalogEnvironment[];
  now: Date;
}

export function newTaskId(): string {
  return `task_${randomBase62(16)}`;
}

function labelOf(row: TaskRecord): { id: string; name: string; rev: string | null } {
  return { id: row.id, name: row.name, rev: taskRev(row) };
}

/** A task the account may read, by id or `<name>@v<N>`; 404 not_found otherwise. */
export async function requireReadableTask(db: Db, accountId: string, idOrRev: string): Promise<TaskRecord> {
  const rev = /^([a-z0-9-]+)@v(\d+)$/.exec(idOrRev);
  const row = rev ? await findVisibleFrozenRevision(db, accountId, rev[1]!, Number(rev[2])) : await findReadableTaskById(db, accountId, idOrRev);
  if (!row) throw new AssayError("not_found", `no task ${JSON.stringify(idOrRev)} visible to this account; use a task id or a frozen revision "<name>@v<N>"`);
  return row;
}

/** The account's own task (by id or rev), for operations that change it; 404 not_found otherwise. */
export async function requireOwnTask(db: Db, accountId: string, idOrRev: string): Promise<TaskRecord> {
  const row = await requireReadableTask(db, accountId, idOrRev);
  if (row.account_id !== accountId) throw new AssayError("not_found", `task ${JSON.stringify(idOrRev)} belongs to another account; only its owner can change it`);
  return row;
}

/** The row fields for a stored spec. */
function specColumns(spec: TaskSpecFields): { name: string; visibility: string; spec: string } {
  return { name: spec.name, visibility: spec.visibility, spec: JSON.stringify(spec) };
}

/** POST /v1/tasks: validates and inserts a draft. */
export async function createTask(body: unknown, ctx: TaskContext): Promise<TaskRecord> {
  const spec = await validateTaskSpec(checkTaskBody(body), ctx);
  const id = newTaskId();
  await insertTask(ctx.db, {
    id, account_id: ctx.accountId, name: spec.name, version: null, status: "draft", visibility: spec.visibility,
    created: ctx.now.toISOString(), frozen: null, spec: JSON.stringify(spec), signatures: "[]", pilot: null,
  });
  return (await getTask(ctx.db, id))!;
}

/**
 * POST /v1/tasks/{id}/amend: merges the given fields over the stored spec, re-validates the whole
 * spec, and (while piloting) appends `{at, fields}` to pilot.amendments naming the fields that changed.
 */
export async function amendTask(row: TaskRecord, body: unknown, ctx: TaskContext): Promise<TaskRecord> {
  const status = nextTaskStatus(row.status, "amend", labelOf(row));
  const changes = checkTaskAmendment(body);
  const before = storedSpec(row);
  const spec = await validateTaskSpec({ ...before, ...changes }, ctx);
  const changed = (TASK_FIELDS as readonly TaskField[]).filter((f) => f in changes && canonicalJson(before[f]) !== canonicalJson(spec[f]));
  let pilot = row.pilot as TaskPilot | null;
  if (pilot && status === "piloting" && changed.length > 0) {
    pilot = { ...pilot, amendments: [...pilot.amendments, { at: ctx.now.toISOString(), fields: changed }] };
  }
  await updateTaskSpec(ctx.db, row.id, { ...specColumns(spec), pilot: pilot === null ? null : JSON.stringify(pilot) });
  return (await getTask(ctx.db, row.id))!;
}

export interface PilotDeps {
  pins: FirmwarePins;
  runId: string;
  /**
   * Checks and prepares the pilot's policy beyond its contracts (checkpoint models, endpoint
   * pre-flight: coordinator/models/policy-preparation.ts) and returns the models to pin. Default: none.
   */
  preparePolicy?: (planned: PlannedPilot) => Promise<PlannedPilot["run"]["resolvedPins"]["models"]>;
}

/** POST /v1/tasks/{id}/pilot: inserts the calibration run and records the pilot; returns the pilot. */
export async function pilotTask(row: TaskRecord, body: unknown, ctx: TaskContext, deps: PilotDeps): Promise<TaskPilot> {
  nextTaskStatus(row.status, "pilot", labelOf(row));
  const planned = planPilot(body, { id: row.id, spec: storedSpec(row) }, {
    pins: deps.pins, environments: ctx.environments, runId: deps.runId, accountId: ctx.accountId, now: ctx.now,
  });
  const models = await deps.preparePolicy?.(planned);
  if (models && Object.keys(models).length > 0) planned.run.resolvedPins = { ...planned.run.resolvedPins, models };
  // The task may have moved on (frozen, amended into another pilot) while the policy was prepared.
  row = (await getTask(ctx.db, row.id))!;
  nextTaskStatus(row.status, "pilot", labelOf(row));
  const earlier = row.pilot as TaskPilot | null;
  // A new pilot replaces run, robot and episodes; the amendment history carries over.
  const pilot: TaskPilot = { run_id: deps.runId, robot: planned.robotPin, episodes: planned.episodes, amendments: earlier?.amendments ?? [] };
  await transact(ctx.db, async (tx) => {
    const units = planned.run.units ?? [{ model: planned.run.plan.model, environment: planned.run.plan.environment }];
    await insertRun(tx, { ...planned.run, headlinePriors: await headlinePriorsAtSubmission(tx, units) });
    await setTaskPilot(tx, row.id, JSON.stringify(pilot));
  });
  return pilot;
}

/** The Task Spec fields a signature covers, for a spec frozen as `rev` at `frozen`. */
export function signableSpec(spec: TaskSpecFields, rev: string, frozen: string): Record<string, unknown> {
  const { baseline: _baseline, ...published } = spec;
  return { ...published, rev, frozen };
}

/** Both signatures over a frozen spec: the owning account's key, then the service's. */
export async function signFrozenSpec(db: Db, ownerAccountId: string, spec: TaskSpecFields, rev: string, frozen: string, now: Date): Promise<string[]> {
  const signable = signableSpec(spec, rev, frozen);
  return [signTaskSpec(signable, await ensureSigningKey(db, ownerAccountId, now)), signTaskSpec(signable, await ensureServiceKey(db, now))];
}

/** POST /v1/tasks/{id}/freeze: piloting -> frozen at `<name>@v<N>`, N = 1 + the highest frozen version of the name. */
export async function freezeTask(row: TaskRecord, ctx: TaskContext): Promise<TaskRecord> {
  nextTaskStatus(row.status, "freeze", labelOf(row));
  await transact(ctx.db, async (tx) => {
    // Two drafts of one name frozen at once (on two coordinators) must not both take version N.
    await lockName(tx, `task-versions:${row.name}`);
    const current = (await getTask(tx, row.id))!;
    nextTaskStatus(current.status, "freeze", labelOf(current));
    const version = await maxFrozenVersion(tx, current.name) + 1;
    const rev = `${current.name}@v${version}`;
    const frozen = ctx.now.toISOString();
    const signatures = await signFrozenSpec(tx, ctx.accountId, storedSpec(current), rev, frozen, ctx.now);
    await freezeTaskRow(tx, row.id, { version, frozen, signatures: JSON.stringify(signatures) });
  });
  return (await getTask(ctx.db, row.id))!;
}

/** POST /v1/tasks/{id}/revise: a new draft carrying a frozen revision's fields; it freezes as the next revision. */
export async function reviseTask(row: TaskRecord, ctx: TaskContext): Promise<TaskRecord> {
  nextTaskStatus(row.status, "revise", labelOf(row));
  const id = newTaskId();
  await insertTask(ctx.db, {
    id, account_id: ctx.accountId, name: row.name, version: null, status: "draft", visibility: row.visibility,
    created: ctx.now.toISOString(), frozen: null, spec: JSON.stringify(storedSpec(row)), signatures: "[]", pilot: null,
  });
  return (await getTask(ctx.db, id))!;
}

/**
 * Validation of a Task Spec's creation fields (POST /v1/tasks, and the merged spec of an amend).
 * Every failure is a 422 contract_validation_failed naming the field and the offending value.
 * Predicates are parsed (syntax errors name the predicate, the position and the reason) and bound
 * against the instruments of the target environment class: the union of the instrument kinds of
 * every catalogue environment of that class.
 */
import { q } from "../runs/field-checks.js";
import { checkBindings, PredicateSyntaxError } from "../../protocol/predicates/index.js";
import { ENVIRONMENT_CLASSES, type CatalogEnvironment, type EnvironmentClass } from "../catalog/environments.js";
import { AssayError } from "../errors/assay-error.js";
import { findKitByName } from "../store/kits-repo.js";
import type { Db } from "../store/database.js";
import { accountOwningTaskName } from "../store/tasks-repo.js";
import { parseTaskAmendment, parseTaskBody } from "./task-schemas.js";

/** Creation fields, in the order the docs list them. `environment_class` is Assay's addition. */
export const TASK_FIELDS = [
  "name", "visibility", "environment_class", "initial_conditions", "success_predicates",
  "instructions", "stages", "envelope", "baseline",
] as const;
export type TaskField = (typeof TASK_FIELDS)[number];

export const TASK_VISIBILITIES = ["private", "published"] as const;
export const DEFAULT_ENVIRONMENT_CLASS: EnvironmentClass = "standard";
export const TASK_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const KIT_REF_PREFIX = "kit/";

/** The stored spec (tasks.spec): creation fields with defaults filled in, wire names. */
export interface TaskSpecFields {
  name: string;
  visibility: (typeof TASK_VISIBILITIES)[number];
  environment_class: EnvironmentClass;
  initial_conditions: Record<string, Record<string, unknown>>;
  success_predicates: Array<Record<string, string>>;
  instructions: { sampled_per_episode: string[]; held_out: string[] } | null;
  stages: Array<Record<string, string>>;
  envelope: { lighting?: string[]; distractors?: string; out_of_scope?: string[] } | null;
  baseline: { internal_trials: number; internal_rate: number } | null;
}

export interface ValidateTaskContext {
  db: Db;
  accountId: string;
  environments: readonly CatalogEnvironment[];
}


function invalid(message: string): never {
  throw new AssayError("contract_validation_failed", message);
}




function finite(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A creation body checked against its declaration (coordinator/tasks/task-schemas.ts). */
export function checkTaskBody(body: unknown): Record<string, unknown> {
  return parseTaskBody(body);
}

/** An amend body: any subset of the creation fields, checked against its declaration. */
export function checkTaskAmendment(body: unknown): Record<string, unknown> {
  return parseTaskAmendment(body);
}

/**
 * Validates a complete set of creation fields (a creation body, or an amend merged over the stored
 * spec) and returns it with defaults filled in. Throws the first problem found.
 */
export async function validateTaskSpec(raw: Record<string, unknown>, ctx: ValidateTaskContext): Promise<TaskSpecFields> {
  // The shape (types, required and unknown fields, enums, ranges) is checked by the declarations
  // (coordinator/tasks/task-schemas.ts) before this: what follows needs the catalogue or the store.
  const name = raw.name as string;
  const visibility = raw.visibility ?? "private";
  const environmentClass = raw.environment_class ?? DEFAULT_ENVIRONMENT_CLASS;
  const classEnvs = ctx.environments.filter((e) => e.class === environmentClass);
  if (classEnvs.length === 0) invalid(`environment_class ${q(environmentClass)} has no environment in the catalogue; choose one of ${[...new Set(ctx.environments.map((e) => e.class))].join(", ")}`);

  const owner = await accountOwningTaskName(ctx.db, name);
  if (owner !== undefined && owner !== ctx.accountId) invalid(`task name ${q(name)} belongs to another account; task names are global so that "<name>@v<N>" is unambiguous; choose another name`);

  const spec: TaskSpecFields = {
    name,
    visibility: visibility as TaskSpecFields["visibility"],
    environment_class: environmentClass as EnvironmentClass,
    initial_conditions: await validateInitialConditions(raw.initial_conditions, classEnvs, ctx),
    success_predicates: raw.success_predicates as TaskSpecFields["success_predicates"],
    instructions: validateInstructions(raw.instructions),
    stages: (raw.stages ?? []) as TaskSpecFields["stages"],
    envelope: validateEnvelope(raw.envelope, classEnvs),
    baseline: (raw.baseline ?? null) as TaskSpecFields["baseline"],
  };
  validatePredicates(spec, classEnvs);
  return spec;
}

async function validateInitialConditions(value: unknown, classEnvs: readonly CatalogEnvironment[], ctx: ValidateTaskContext): Promise<TaskSpecFields["initial_conditions"]> {
  const conditions = value as Record<string, Record<string, unknown>>;
  const stocked = [...new Set(classEnvs.flatMap((e) => e.objects))];
  for (const [key, spec] of Object.entries(conditions)) {
    const where = `initial_conditions.${key}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*(?:[-/][A-Za-z0-9_]+)*$/.test(key)) invalid(`${where}: the name must be usable in a predicate (letters, digits, _, joined by - or /); got ${q(key)}`);
    const object = spec.object;
    if (typeof object !== "string" || object.trim() === "") invalid(`${where}.object is required: an object the environment stocks (${stocked.join(", ")}) or "kit/<name>"; got ${q(object)}`);
    if (object.startsWith(KIT_REF_PREFIX)) {
      await checkKitReference(`${where}.object`, object.slice(KIT_REF_PREFIX.length), ctx);
    } else if (!stocked.includes(object)) {
      invalid(`${where}.object ${q(object)} is not stocked by any environment of the target class; stocked: ${stocked.join(", ")}; ship your own hardware as a kit and reference it as "kit/<name>"`);
    }
    const pose = spec.pose;
    if (!Array.isArray(pose) || pose.length !== 4 || !pose.every(finite)) invalid(`${where}.pose is required: [x_m, y_m, z_m, yaw_deg], four numbers; got ${q(pose)}`);
  }
  return value as TaskSpecFields["initial_conditions"];
}

async function checkKitReference(field: string, kitName: string, ctx: ValidateTaskContext): Promise<void> {
  const kit = await findKitByName(ctx.db, ctx.accountId, kitName);
  if (!kit) invalid(`${field}: no kit ${q(kitName)} on this account; register it with POST /v1/kits and reference it once it is available`);
  if (kit.status !== "available") {
    invalid(`${field}: kit ${q(kitName)} (${kit.id}) is ${kit.status}, not available; a task can reference kit/${kitName} once Assay has received, tracked and made it available`);
  }
}

function validateInstructions(value: unknown): TaskSpecFields["instructions"] {
  if (value === undefined || value === null) return null;
  const given = value as { sampled_per_episode?: string[]; held_out?: string[] };
  const sampled = given.sampled_per_episode ?? [];
  const heldOut = given.held_out ?? [];
  const both = heldOut.find((h) => sampled.includes(h));
  if (both !== undefined) invalid(`instructions: ${q(both)} is both sampled and held out; a held-out paraphrase must never be sampled`);
  return { sampled_per_episode: sampled, held_out: heldOut };
}

function validateEnvelope(value: unknown, classEnvs: readonly CatalogEnvironment[]): TaskSpecFields["envelope"] {
  if (value === undefined || value === null) return null;
  const envelope = value as NonNullable<TaskSpecFields["envelope"]>;
  const presets = [...new Set(classEnvs.flatMap((e) => e.lighting))];
  for (const preset of envelope.lighting ?? []) {
    if (!presets.includes(preset)) invalid(`envelope.lighting: no environment of the target class has lighting preset ${q(preset)}; presets: ${presets.join(", ")}`);
  }
  if (envelope.distractors !== undefined) {
    const sets = [...new Set(classEnvs.flatMap((e) => e.distractor_sets))];
    if (!sets.includes(envelope.distractors)) invalid(`envelope.distractors must be a distractor set of the target class (${sets.join(", ")}); got ${q(envelope.distractors)}`);
  }
  return envelope;
}

/** Parses every predicate and stage, then checks each binds to the union of the class's instruments. */
function validatePredicates(spec: TaskSpecFields, classEnvs: readonly CatalogEnvironment[]): void {
  const available = [...new Set(classEnvs.flatMap((e) => e.instruments.map((i) => i.kind)))];
  let problems;
  try {
    problems = checkBindings({ success_predicates: spec.success_predicates, stages: spec.stages }, available);
  } catch (error) {
    if (!(error instanceof PredicateSyntaxError)) throw error;
    // The message already reads `success_predicates[0] "lifted": <reason> at <position>...`.
    invalid(`predicate does not parse: ${error.message} (position ${error.position})`);
  }
  const problem = problems[0];
  if (problem) {
    const names = classEnvs.map((e) => `${e.name}@${e.version}`).join(", ");
    invalid(
      `${problem.field}[${problem.index}] "${problem.name}" needs instrument ${problem.missing.join(" and ")}, which no ${spec.environment_class} environment has ` +
      `(${names}: ${available.join(", ")}); change the predicate or target another environment_class`,
    );
  }
}

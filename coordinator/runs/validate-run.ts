/**
 * Validation of a POST /v1/runs body, before anything is stored or scheduled (spec 7, rule 1: a
 * rejected submission costs nothing): the kind's module validates and plans it, then the
 * instruction set is checked against the frozen revisions its units pin. Each failure is an
 * AssayError naming the field, quoting the bad value and saying what would be accepted.
 */
import { kindModule } from "../kinds/registry.js";
import { findVisibleFrozenRevision } from "../store/tasks-repo.js";
import { contract, isPlainObject, q } from "./field-checks.js";
import { validateInstructionSet } from "./instruction-set.js";
import { RUN_KINDS, type RunKindName, type ValidatedRun, type ValidateRunContext } from "./run-request.js";

/** Validates and plans a POST /v1/runs body; throws the first AssayError found. */
export function validateRunRequest(body: unknown, ctx: ValidateRunContext): ValidatedRun {
  if (!isPlainObject(body)) contract(`request body must be a JSON object; got ${Array.isArray(body) ? "an array" : q(body)}`);
  const kind = body.kind ?? "run";
  if (typeof kind !== "string" || !(RUN_KINDS as readonly string[]).includes(kind)) contract(`kind must be one of ${RUN_KINDS.join(", ")}; got ${q(kind)}`);
  const validated = kindModule(kind as RunKindName).plan(body, ctx);
  // `instructions` (sampled, held_out) is checked once the units say which frozen revisions run.
  const revisions = validated.units ? [...new Set(validated.units.map((u) => u.task))] : [validated.resolvedPins.task];
  validateInstructionSet(validated.kind, body.instructions, revisions.map((rev) => {
    const match = /^(.+)@v(\d+)$/.exec(rev);
    const row = match ? findVisibleFrozenRevision(ctx.db, ctx.accountId, match[1], Number(match[2])) : undefined;
    return { rev, spec: row ? JSON.parse(row.spec) : {} };
  }));
  return validated;
}

/**
 * Validation of a POST /v1/runs body, before anything is stored or scheduled (spec 7, rule 1: a
 * rejected submission costs nothing). The kind's declared shape (its zod schema) is checked first,
 * then its module plans the run and checks what a shape cannot know (pins installed on a cell, the
 * scene's presets and instruments, frozen task revisions), then the instruction set is checked
 * against the revisions its units pin, and each unit's task against the instruments the installed
 * cells report (instrument-check.ts). Each failure is an AssayError naming the field, quoting the
 * bad value and saying what would be accepted, with the spec's code for that field.
 */
import type { z } from "zod";
import type { ErrorCode } from "../errors/codes.js";
import { kindModule } from "../kinds/registry.js";
import { parseWith } from "../json/zod-errors.js";
import { findVisibleFrozenRevision } from "../store/tasks-repo.js";
import { contract, isPlainObject, q } from "../runs/field-checks.js";
import { validateInstructionSet } from "../runs/instruction-set.js";
import { checkUnitsScorable } from "../runs/instrument-check.js";
import { checkJudgeTasks } from "../runs/judge-checks.js";
import { RUN_KINDS, type RunKindName, type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";

/** The spec's code for a problem with a field, missing or malformed (422 either way). */
export const RUN_FIELD_CODES: Readonly<Record<string, ErrorCode>> = {
  robot: "firmware_pin_unavailable",
  robots: "firmware_pin_unavailable",
  iterate_on: "firmware_pin_unavailable",
  escalate_to: "firmware_pin_unavailable",
  source: "firmware_pin_unavailable",
  environment: "environment_unavailable",
  environments: "environment_unavailable",
  task: "task_unknown",
  episodes: "episodes_invalid",
  episodes_per_cell: "episodes_invalid",
};

/** `<field> is required: kind "<kind>" requires <field> (<what it is>); mandatory fields of <kind>: ...`. */
function missingField(kind: RunKindName, schema: z.ZodObject, field: string): { code: ErrorCode; message: string } {
  const shape = schema.shape as Record<string, z.ZodType>;
  const mandatory = Object.keys(shape).filter((key) => key !== "kind" && !shape[key].safeParse(undefined).success);
  const what = shape[field]?.description;
  return {
    code: RUN_FIELD_CODES[field] ?? "contract_validation_failed",
    message: `${field} is required: kind "${kind}" requires ${field}${what ? ` (${what})` : ""}; mandatory fields of ${kind}: ${mandatory.join(", ")}`,
  };
}

/** Validates and plans a POST /v1/runs body; throws the first AssayError found. */
export async function validateRunRequest(body: unknown, ctx: ValidateRunContext): Promise<ValidatedRun> {
  if (!isPlainObject(body)) contract(`request body must be a JSON object; got ${Array.isArray(body) ? "an array" : q(body)}`);
  const kind = body.kind ?? "run";
  if (typeof kind !== "string" || !(RUN_KINDS as readonly string[]).includes(kind)) contract(`kind must be one of ${RUN_KINDS.join(", ")}; got ${q(kind)}`);
  const module = kindModule(kind as RunKindName);
  parseWith(module.schema, body, { codeOfField: RUN_FIELD_CODES, missing: (field) => missingField(module.name, module.schema, field) });
  const validated = await module.plan(body, ctx);
  // `instructions` (sampled, held_out) is checked once the units say which frozen revisions run.
  const revisions = validated.units ? [...new Set(validated.units.map((u) => u.task))] : [validated.resolvedPins.task];
  const specs: Array<{ rev: string; spec: Record<string, unknown> }> = [];
  for (const rev of revisions) {
    const match = /^(.+)@v(\d+)$/.exec(rev);
    const row = match ? await findVisibleFrozenRevision(ctx.db, ctx.accountId, match[1], Number(match[2])) : undefined;
    specs.push({ rev, spec: row?.spec ?? {} });
  }
  validateInstructionSet(validated.kind, body.instructions, specs);
  // A judge decides a task's person-judged predicate first: the task must have one (docs/judges.md).
  checkJudgeTasks(body.judge, specs);
  const { model, firmware, environment } = validated.plan;
  await checkUnitsScorable(ctx, validated.units ?? [{ robot: validated.resolvedPins.robot, model, firmware, environment, task: validated.resolvedPins.task }]);
  return validated;
}

/**
 * POST /v1/runs for kinds other than `run`: each kind validates its own fields (mandatory ones
 * missing or malformed are 422 with the field named) and plans its units and episodes. Called by
 * validateRunRequest once the kind is known.
 */
import { validateInstructionSet } from "../runs/instruction-set.js";
import { contract, isPlainObject, q, type ValidatedRun, type ValidateRunContext } from "../runs/validate-run.js";
import { findVisibleFrozenRevision } from "../store/tasks-repo.js";
import { validateCompare } from "./compare.js";
import { validateEval } from "./eval.js";
import { validateMatrix } from "./matrix.js";
import { validateThreshold } from "./threshold.js";
import { validateTransfer } from "./transfer.js";
import { validateVerify } from "./verify.js";

type KindValidator = (body: Record<string, unknown>, ctx: ValidateRunContext) => ValidatedRun;

function validatorOf(kind: ValidatedRun["kind"]): KindValidator | undefined {
  switch (kind) {
    case "compare": return validateCompare;
    case "matrix": return validateMatrix;
    case "transfer": return validateTransfer;
    case "eval": return validateEval;
    case "threshold": return validateThreshold;
    case "verify": return validateVerify;
    default: return undefined;
  }
}

/** Validates and plans a run of `kind` (not `run`); throws the first AssayError found. */
export function validateKindRequest(kind: ValidatedRun["kind"], body: unknown, ctx: ValidateRunContext): ValidatedRun {
  if (!isPlainObject(body)) contract(`request body must be a JSON object; got ${q(body)}`);
  const validate = validatorOf(kind);
  if (!validate) contract(`kind ${q(kind)} is not supported by this coordinator yet; supported: run, compare, matrix, transfer, eval, threshold, verify`);
  const validated = validate(body, ctx);
  // `instructions` (sampled, held_out) is checked once the units say which frozen revisions run.
  const pins = [...new Set((validated.units ?? []).map((u) => u.task))];
  validateInstructionSet(kind, body.instructions, pins.map((rev) => {
    const match = /^(.+)@v(\d+)$/.exec(rev);
    const row = match ? findVisibleFrozenRevision(ctx.db, ctx.accountId, match[1], Number(match[2])) : undefined;
    return { rev, spec: row ? JSON.parse(row.spec) : {} };
  }));
  return validated;
}

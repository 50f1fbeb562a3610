/**
 * Which of a task's instruction lists a run samples from (run field `instructions`, *added*):
 *
 * - `sampled` (default): each episode draws from `instructions.sampled_per_episode`, never from
 *   `held_out`;
 * - `held_out`: each episode draws from `instructions.held_out` only. The spec says held-out
 *   paraphrases "are never sampled during iteration and are reported separately", so this mode is a
 *   verification measure: it needs a frozen task revision (every run kind below pins one) and is
 *   refused on runs that iterate or select (pilots, `threshold`, `compare`) and on `verify`, whose
 *   scenarios carry their own instruction.
 *
 * The scheduler passes the mode to the cell inside task_json as `instruction_set`.
 */
import { contract, q } from "./field-checks.js";

export const INSTRUCTION_SETS = ["sampled", "held_out"] as const;
export type InstructionSet = (typeof INSTRUCTION_SETS)[number];

/** Kinds that may run on held-out instructions: verification-style measurements of a frozen revision. */
export const HELD_OUT_KINDS = ["run", "eval", "matrix", "transfer"] as const;

/** Why the other kinds may not: named in the 422 message. */
const HELD_OUT_REFUSED: Record<string, string> = {
  threshold: "a threshold run iterates on checkpoints, and held-out paraphrases are never sampled while iterating",
  compare: "a comparison selects between policies, which would make the held-out paraphrases part of iteration",
  verify: "verify episodes replay scenarios that carry their own instruction",
};

/**
 * Validates the run field `instructions` for `kind`; `tasks` are the frozen revisions the run pins
 * (with their specs). Returns the mode (default "sampled").
 */
export function validateInstructionSet(
  kind: string,
  value: unknown,
  tasks: ReadonlyArray<{ rev: string; spec: { instructions?: { held_out?: unknown } | null } }>,
): InstructionSet {
  if (value === undefined) return "sampled";
  if (typeof value !== "string" || !(INSTRUCTION_SETS as readonly string[]).includes(value)) {
    contract(`instructions must be one of ${INSTRUCTION_SETS.join(", ")}; got ${q(value)}`);
  }
  if (value === "sampled") return "sampled";
  if (!(HELD_OUT_KINDS as readonly string[]).includes(kind)) {
    contract(`instructions "held_out" is not allowed on kind "${kind}": ${HELD_OUT_REFUSED[kind] ?? "it is not a verification run"}; kinds that may evaluate held-out instructions: ${HELD_OUT_KINDS.join(", ")}`);
  }
  for (const task of tasks) {
    const heldOut = task.spec.instructions?.held_out;
    if (!Array.isArray(heldOut) || heldOut.length === 0) {
      contract(`instructions "held_out": task ${task.rev} declares no held-out instructions (instructions.held_out is empty); submit instructions "sampled" or revise the task`);
    }
  }
  return "held_out";
}

/** The mode a stored run request asks for (runs created before the field existed: "sampled"). */
export function instructionSetOf(request: { instructions?: unknown }): InstructionSet {
  return request.instructions === "held_out" ? "held_out" : "sampled";
}

/** task_json for the cell with the run's instruction set added (`instruction_set`). */
export function withInstructionSet(taskJson: string, request: { instructions?: unknown }): string {
  return JSON.stringify({ ...(JSON.parse(taskJson) as object), instruction_set: instructionSetOf(request) });
}

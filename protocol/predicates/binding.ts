/**
 * Which instruments a predicate reads, and whether an environment has them. A task binds to an
 * environment class when every success predicate and stage finds its instruments there.
 */
import { children, type Expr, type Predicate } from "./ast.js";
import type { PredicateField } from "./errors.js";
import { parseTaskPredicates } from "./task-predicates.js";

/** Instrument kinds a predicate can need, as named in the environment catalog. */
export type InstrumentKind = "mocap" | "gripper_state" | "ft_wrist" | "joint_states" | "operator";

const INSTRUMENT_OF: Partial<Record<Expr["kind"], InstrumentKind>> = {
  pose: "mocap",
  distance: "mocap",
  gripper_opening: "gripper_state",
  gripper_holding: "gripper_state",
  ft_force: "ft_wrist",
  ft_force_z: "ft_wrist",
  ft_torque: "ft_wrist",
  joint: "joint_states",
  // A person at the operator station judges it after the episode (docs/operators.md).
  operator_success: "operator",
  // time and event() come with every episode; literals need nothing.
};

/** Instrument kinds `ast` reads, sorted and without repeats. */
export function requiredInstruments(ast: Predicate | Expr): InstrumentKind[] {
  const found = new Set<InstrumentKind>();
  const visit = (expr: Expr): void => {
    const kind = INSTRUMENT_OF[expr.kind];
    if (kind !== undefined) found.add(kind);
    children(expr).forEach(visit);
  };
  visit("condition" in ast ? ast.condition : ast);
  return [...found].sort();
}

/** A predicate or stage that reads instruments the environment lacks. */
export interface BindingProblem {
  field: PredicateField;
  index: number;
  name: string;
  /** Instrument kinds the predicate needs and `available` lacks, sorted. */
  missing: string[];
}

/**
 * The predicates and stages of `task` that do not bind to `available` (the instrument kinds of
 * the target environment, repeats allowed); empty when the task binds. Throws
 * `PredicateSyntaxError` first if any element does not parse.
 */
export function checkBindings(
  task: { success_predicates?: unknown; stages?: unknown },
  available: readonly string[],
): BindingProblem[] {
  const have = new Set(available);
  const parsed = parseTaskPredicates(task);
  const problems: BindingProblem[] = [];
  for (const entry of [...parsed.successPredicates, ...parsed.stages]) {
    const missing = requiredInstruments(entry.predicate).filter((kind) => !have.has(kind));
    if (missing.length > 0) problems.push({ field: entry.field, index: entry.index, name: entry.name, missing });
  }
  return problems;
}

/** Every instrument kind the task's success predicates and stages read, sorted and without repeats. */
export function taskInstrumentKinds(task: { success_predicates?: unknown; stages?: unknown }): InstrumentKind[] {
  const parsed = parseTaskPredicates(task);
  const kinds = new Set<InstrumentKind>();
  for (const entry of [...parsed.successPredicates, ...parsed.stages]) requiredInstruments(entry.predicate).forEach((kind) => kinds.add(kind));
  return [...kinds].sort();
}

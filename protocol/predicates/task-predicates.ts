/**
 * A task spec's `success_predicates` and `stages`: arrays whose elements are `{<name>: <expression>}`.
 * Parses each element and says exactly which one is wrong when one is.
 */
import { children, type Expr, type Predicate } from "./ast.js";
import { PredicateSyntaxError, type PredicateField } from "./errors.js";
import { parsePredicate } from "./parser.js";

/** The predicate fields of a task spec, as they appear on the wire. */
export interface TaskPredicateSpec {
  success_predicates: Array<Record<string, string>>;
  stages?: Array<Record<string, string>>;
}

export interface NamedPredicate {
  field: PredicateField;
  index: number;
  name: string;
  predicate: Predicate;
}

export interface ParsedTaskPredicates {
  successPredicates: NamedPredicate[];
  /** In the task's order: stage k is reached only at or after stage k-1. */
  stages: NamedPredicate[];
}

/**
 * Parses every success predicate and stage. `success_predicates` must be a non-empty array;
 * `stages` may be absent. Each element must be an object with exactly one key (the name, unique
 * within its field) whose value is an expression string. Throws `PredicateSyntaxError` carrying
 * `field`, `index` and, when known, `predicateName`; its message starts with the location, e.g.
 * `stages[1] "grasped": unknown signal "gripper.hold" at 0; ...`.
 */
export function parseTaskPredicates(task: { success_predicates?: unknown; stages?: unknown }): ParsedTaskPredicates {
  const success = task.success_predicates;
  if (!Array.isArray(success) || success.length === 0) {
    throw new PredicateSyntaxError(0, `must be a non-empty array of {<name>: <expression>}; got ${show(success)}`, {
      field: "success_predicates",
    });
  }
  if (task.stages !== undefined && !Array.isArray(task.stages)) {
    throw new PredicateSyntaxError(0, `must be an array of {<name>: <expression>}; got ${show(task.stages)}`, { field: "stages" });
  }
  return {
    successPredicates: parseField("success_predicates", success),
    stages: parseField("stages", (task.stages as unknown[] | undefined) ?? []),
  };
}

function parseField(field: PredicateField, elements: unknown[]): NamedPredicate[] {
  const firstIndexOf = new Map<string, number>();
  return elements.map((element, index) => {
    const name = elementName(field, index, element);
    const earlier = firstIndexOf.get(name);
    if (earlier !== undefined) {
      throw new PredicateSyntaxError(0, `duplicate name "${name}"; ${field}[${earlier}] already uses it`, { field, index, name });
    }
    firstIndexOf.set(name, index);
    try {
      const predicate = parsePredicate((element as Record<string, string>)[name]!);
      checkPersonJudgedShape(field, predicate);
      return { field, index, name, predicate };
    } catch (error) {
      if (error instanceof PredicateSyntaxError) throw error.inTask(field, index, name);
      throw error;
    }
  });
}

/**
 * `operator.success` is a person's label, given once after the episode: it stands alone as a whole
 * success predicate (beside instrument predicates if need be), never inside an expression, a
 * temporal suffix or a stage, where it could never be decided.
 */
function checkPersonJudgedShape(field: PredicateField, predicate: Predicate): void {
  const alone = predicate.condition.kind === "operator_success";
  if (!alone && !mentionsOperator(predicate.condition)) return;
  const where = predicate.source.indexOf("operator");
  if (field === "stages") {
    throw new PredicateSyntaxError(Math.max(0, where), "operator.success is judged by a person after the episode, so it cannot be a stage; put it in success_predicates");
  }
  if (!alone || predicate.forS !== undefined || predicate.withinS !== undefined) {
    throw new PredicateSyntaxError(Math.max(0, where), `operator.success must be a success predicate on its own (a person's label after the episode); got "${predicate.source.slice(0, 80)}": put other conditions in predicates of their own`);
  }
}

function mentionsOperator(expr: Expr): boolean {
  return expr.kind === "operator_success" || children(expr).some(mentionsOperator);
}

/** Whether a parsed success predicate is a person's label (`operator.success`) rather than an instrument reading. */
export function isPersonJudged(predicate: Predicate): boolean {
  return predicate.condition.kind === "operator_success";
}

/**
 * The names of `task`'s success predicates judged by a person, and the task without them (what
 * the cell's instruments decide). Empty names when the task needs no label. Throws like
 * `parseTaskPredicates`.
 */
export function splitPersonJudged<T extends { success_predicates: Array<Record<string, string>> }>(task: T): { personJudged: string[]; instrumentTask: T } {
  const parsed = parseTaskPredicates(task);
  const personJudged = parsed.successPredicates.filter((p) => isPersonJudged(p.predicate)).map((p) => p.name);
  if (personJudged.length === 0) return { personJudged, instrumentTask: task };
  const judged = new Set(personJudged);
  return { personJudged, instrumentTask: { ...task, success_predicates: task.success_predicates.filter((e) => !judged.has(Object.keys(e)[0]!)) } };
}

function elementName(field: PredicateField, index: number, element: unknown): string {
  const shape = "must be an object with exactly one key, the name, whose value is the expression string";
  if (typeof element !== "object" || element === null || Array.isArray(element)) {
    throw new PredicateSyntaxError(0, `${shape}; got ${show(element)}`, { field, index });
  }
  const keys = Object.keys(element);
  if (keys.length !== 1) throw new PredicateSyntaxError(0, `${shape}; got ${keys.length} keys in ${show(element)}`, { field, index });
  const name = keys[0]!;
  if (name.trim() === "") throw new PredicateSyntaxError(0, `${shape}; got an empty name in ${show(element)}`, { field, index });
  const value = (element as Record<string, unknown>)[name];
  if (typeof value !== "string") {
    throw new PredicateSyntaxError(0, `${shape}; got ${show(value)} for "${name}"`, { field, index, name });
  }
  return name;
}

function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

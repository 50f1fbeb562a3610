/**
 * A task spec's `success_predicates` and `stages`: arrays whose elements are `{<name>: <expression>}`.
 * Parses each element and says exactly which one is wrong when one is.
 */
import type { Predicate } from "./ast.js";
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
      return { field, index, name, predicate: parsePredicate((element as Record<string, string>)[name]!) };
    } catch (error) {
      if (error instanceof PredicateSyntaxError) throw error.inTask(field, index, name);
      throw error;
    }
  });
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

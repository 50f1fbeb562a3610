/**
 * Follows a task's success predicates and stages through an episode, frame by frame.
 *
 * Each predicate is a small state machine (`stepPredicate`): waiting -> holding (condition true,
 * `for` clock running) -> satisfied, latched from then on; or -> missed once its `within`
 * deadline has passed. Stages are ordered: stage k starts being evaluated in the frame stage
 * k-1 is reached (so both may be reached in the same frame), never before.
 */
import { children, type Expr, type NumericExpr, type Predicate } from "./ast.js";
import { evaluateCondition, evaluateNumber } from "./evaluate.js";
import type { SignalFrame } from "./signal-frame.js";
import { parseTaskPredicates, type NamedPredicate, type TaskPredicateSpec } from "./task-predicates.js";

/** Frame timestamps are floating point; durations this close count as elapsed. */
const TIME_EPSILON_S = 1e-9;

export type PredicateState =
  | { phase: "waiting" }
  | { phase: "holding"; sinceS: number }
  | { phase: "satisfied"; atS: number }
  | { phase: "missed" };

/**
 * The one transition function: the state after a frame at `tS` in which the condition was
 * `holds` (true only when definitely true; false or unknown both break a `for`).
 */
export function stepPredicate(state: PredicateState, predicate: Predicate, tS: number, holds: boolean): PredicateState {
  if (state.phase === "satisfied" || state.phase === "missed") return state;
  if (predicate.withinS !== undefined && tS > predicate.withinS + TIME_EPSILON_S) return { phase: "missed" };
  if (!holds) return { phase: "waiting" };
  const sinceS = state.phase === "holding" ? state.sinceS : tS;
  if (tS - sinceS + TIME_EPSILON_S >= (predicate.forS ?? 0)) return { phase: "satisfied", atS: tS };
  return { phase: "holding", sinceS };
}

export interface PredicateStatus {
  satisfied: boolean;
  /** Episode time of the frame in which it was satisfied, seconds. */
  atS?: number;
}

export interface StageStatus {
  reached: boolean;
  /** Episode time of the frame in which it was reached, seconds. */
  atS?: number;
}

export interface TaskStatus {
  /** Every success predicate is satisfied (never, during the episode, when one is operator.success: a person's label comes after). */
  success: boolean;
  predicates: Record<string, PredicateStatus>;
  stages: Record<string, StageStatus>;
}

export interface TaskMonitor {
  /** Feed the next frame; `frame.tS` must not be less than the previous frame's. */
  update(frame: SignalFrame): void;
  status(): TaskStatus;
}

interface Tracked {
  name: string;
  predicate: Predicate;
  state: PredicateState;
}

/**
 * A monitor for one episode of `task`. Throws `PredicateSyntaxError` if any predicate or stage
 * does not parse (see `parseTaskPredicates`).
 */
export function compileTaskMonitor(task: TaskPredicateSpec): TaskMonitor {
  const parsed = parseTaskPredicates(task);
  const track = ({ name, predicate }: NamedPredicate): Tracked => ({ name, predicate, state: { phase: "waiting" } });
  const predicates = parsed.successPredicates.map(track);
  const stages = parsed.stages.map(track);
  const initialExprs = [...predicates, ...stages].flatMap((t) => initialsOf(t.predicate.condition));
  const initialValues = new Map<NumericExpr, number>();
  let lastTS = -Infinity;

  const step = (tracked: Tracked, frame: SignalFrame): void => {
    if (tracked.state.phase === "satisfied" || tracked.state.phase === "missed") return;
    const holds = evaluateCondition(tracked.predicate.condition, frame, initialValues) === true;
    tracked.state = stepPredicate(tracked.state, tracked.predicate, frame.tS, holds);
  };

  return {
    update(frame) {
      if (!Number.isFinite(frame.tS) || frame.tS < lastTS) {
        throw new RangeError(`frame.tS must be a finite number not less than the previous frame's ${lastTS}; got ${frame.tS}`);
      }
      lastTS = frame.tS;
      // Inner initial() before outer (post-order), so nested ones see a value in the same frame.
      for (const expr of initialExprs) {
        if (initialValues.has(expr)) continue;
        const value = evaluateNumber(expr.operand, frame, initialValues);
        if (value !== undefined) initialValues.set(expr, value);
      }
      for (const tracked of predicates) step(tracked, frame);
      for (const [k, stage] of stages.entries()) {
        if (k > 0 && stages[k - 1]!.state.phase !== "satisfied") break;
        step(stage, frame);
      }
    },

    status() {
      const atS = (state: PredicateState) => (state.phase === "satisfied" ? { atS: state.atS } : {});
      return {
        // A person's label (operator.success) is never satisfied here: such an episode runs its full
        // time and the agent combines the label with the other predicates afterwards.
        success: predicates.every((t) => t.state.phase === "satisfied"),
        predicates: Object.fromEntries(predicates.map((t) => [t.name, { satisfied: t.state.phase === "satisfied", ...atS(t.state) }])),
        stages: Object.fromEntries(stages.map((t) => [t.name, { reached: t.state.phase === "satisfied", ...atS(t.state) }])),
      };
    },
  };
}

/** The `initial(...)` nodes under `expr`, innermost first. */
function initialsOf(expr: Expr): Array<Extract<NumericExpr, { kind: "initial" }>> {
  const below = children(expr).flatMap(initialsOf);
  return expr.kind === "initial" ? [...below, expr] : below;
}

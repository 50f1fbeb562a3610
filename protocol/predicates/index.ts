/**
 * The success-predicate language: parse a task's `success_predicates` and `stages`, check that
 * they bind to an environment's instruments, and monitor them over an episode's frames.
 * Grammar and semantics: docs/predicates.md.
 */
export type {
  ArithmeticOp,
  BooleanExpr,
  ComparisonOp,
  Expr,
  NumericExpr,
  PoseAxis,
  Predicate,
  Span,
} from "./ast.js";
export { formatExpr, formatPredicate, isNumeric } from "./ast.js";
export { PredicateSyntaxError, type PredicateField } from "./errors.js";
export { UNITS, type Unit } from "./lexer.js";
export { KNOWN_FUNCTIONS, KNOWN_SIGNALS, parsePredicate } from "./parser.js";
export { isPersonJudged, parseTaskPredicates, splitPersonJudged, type NamedPredicate, type ParsedTaskPredicates, type TaskPredicateSpec } from "./task-predicates.js";
export { checkBindings, requiredInstruments, taskInstrumentKinds, type BindingProblem, type InstrumentKind } from "./binding.js";
export type { SignalFrame } from "./signal-frame.js";
export { evaluateCondition, evaluateNumber } from "./evaluate.js";
export {
  compileTaskMonitor,
  stepPredicate,
  type PredicateState,
  type PredicateStatus,
  type StageStatus,
  type TaskMonitor,
  type TaskStatus,
} from "./monitor.js";

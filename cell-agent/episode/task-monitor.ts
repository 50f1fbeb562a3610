/**
 * The agent's view of the success-predicate language (protocol/predicates): the runner depends on
 * the compiler's signature only, so tests can hand in a monitor of their own.
 */
import { compileTaskMonitor, type TaskMonitor, type TaskPredicateSpec } from "../../protocol/predicates/index.js";

export type { SignalFrame, TaskMonitor, TaskStatus } from "../../protocol/predicates/index.js";

export type CompileTaskMonitor = (task: TaskPredicateSpec) => TaskMonitor;

export const defaultCompileTaskMonitor: CompileTaskMonitor = compileTaskMonitor;

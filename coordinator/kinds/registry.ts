/**
 * The kind registry: the one place that maps a run's `kind` to its module. Adding a kind means
 * writing its module (coordinator/kinds/kind.ts) and adding it here.
 */
import type { RunKindName } from "../runs/run-request.js";
import { compareKind } from "./compare.js";
import { evalKind } from "./eval.js";
import type { KindTraits, RunKind } from "./kind.js";
import { matrixKind } from "./matrix.js";
import { runKind } from "./run.js";
import { thresholdKind } from "./threshold.js";
import { transferKind } from "./transfer.js";
import { verifyKind } from "./verify.js";

const KINDS: Record<RunKindName, RunKind> = {
  run: runKind,
  eval: evalKind,
  verify: verifyKind,
  matrix: matrixKind,
  threshold: thresholdKind,
  compare: compareKind,
  transfer: transferKind,
};

/** Every kind's module, in the spec's order. */
export function allKinds(): RunKind[] {
  return Object.values(KINDS);
}

/** The module of `kind`; throws for a name that is not a kind (a stored row is always one). */
export function kindModule(kind: RunKindName): RunKind {
  const module = KINDS[kind];
  if (!module) throw new Error(`no run kind ${JSON.stringify(kind)} in the registry`);
  return module;
}

/** The traits of a kind named by a wire string (a report's `run_kind`), or undefined for a name that is none. */
export function kindTraitsOf(name: string): KindTraits | undefined {
  return Object.hasOwn(KINDS, name) ? KINDS[name as RunKindName].traits : undefined;
}

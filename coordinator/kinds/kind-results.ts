/**
 * Results of kinds other than `run`, and what a kind does while its run progresses. The run
 * completer (coordinator/runs/run-results.ts) calls these for every run that has units.
 */
import { decideChecksOfRun } from "../gates/gates.js";
import type { Db } from "../store/database.js";
import type { RunRow } from "../store/runs-repo.js";
import { compareProgress, compareResult } from "./compare.js";
import { evalResult } from "./eval.js";
import { matrixAfterCompleted, matrixResult } from "./matrix.js";
import { thresholdProgress, thresholdResult } from "./threshold.js";
import { transferResult } from "./transfer.js";
import { verifyResult } from "./verify.js";
import type { UnitEpisodeRow } from "./units.js";
import { pooledResult, unitResults, type KindResultContext } from "./unit-results.js";

export type { KindResultContext } from "./unit-results.js";

/** The Result of a multi-unit run from all of its episodes (partial while it runs or once stopped). */
export function kindResult(ctx: KindResultContext & { db: Db }, run: RunRow, episodes: readonly UnitEpisodeRow[]): Record<string, unknown> {
  switch (run.kind) {
    case "compare": return compareResult(ctx, run, episodes);
    case "matrix": return matrixResult(ctx, run, episodes);
    case "transfer": return transferResult(ctx, run, episodes);
    case "eval": return evalResult(ctx, run, episodes);
    case "threshold": return thresholdResult(ctx, run, episodes);
    case "verify": return verifyResult(ctx, run, episodes);
    default: {
      const units = unitResults(ctx, run, episodes);
      return { ...pooledResult(ctx, run, episodes, units), units };
    }
  }
}

/**
 * After an episode of the run finished, before completion is checked (sequential kinds decide
 * here; threshold adds its next episode). Runs inside the completer's transaction. Returns "stopped" when
 * the kind stopped the run (threshold's monthly cap); the caller stores the partial result and publishes.
 */
export function kindProgress(ctx: KindResultContext & { db: Db }, run: RunRow, episodes: readonly UnitEpisodeRow[], now: Date): "stopped" | undefined {
  if (run.kind === "compare") compareProgress(ctx.db, run, episodes, now);
  if (run.kind === "threshold") return thresholdProgress(ctx, run, episodes, now);
  return undefined;
}

/** Once the run completed with `result` (same transaction): webhook events a kind emits. */
export function kindAfterCompleted(db: Db, run: RunRow, result: Record<string, unknown>, now: Date): void {
  if (run.kind === "matrix") matrixAfterCompleted(db, run, result, now);
  // An eval may back a CI gate check; the check is decided with the completion.
  if (run.kind === "eval") decideChecksOfRun(db, run.id, now);
}

/**
 * The spec's EpisodesSpec: a positive integer, or `auto(ci=<number>, moe=<number>)`, which sizes n
 * with the Wilson interval at the worst-case planning rate 0.5.
 */
import { AssayError } from "../errors/assay-error.js";
import { wilsonSampleSize } from "../stats/wilson.js";

/** Upper bound on episodes of one run, integer or sized by auto(...). */
export const MAX_EPISODES = 10_000;

export type EpisodesSpec =
  | { kind: "count"; count: number }
  | { kind: "auto"; ci: number; moe: number; count: number };

const AUTO = /^\s*auto\s*\(\s*ci\s*=\s*([0-9]*\.?[0-9]+)\s*,\s*moe\s*=\s*([0-9]*\.?[0-9]+)\s*\)\s*$/;

function invalid(value: unknown, why?: string): AssayError {
  const got = JSON.stringify(value) ?? String(value);
  const reason = why ? ` (${why})` : "";
  return new AssayError("episodes_invalid", `episodes must be a positive integer or auto(ci=<0..1>, moe=<0..1>); got ${got}${reason}`);
}

/**
 * The confidence a run's episodes were sized at with `auto(ci=c, moe=m)` (`episodes`, or a matrix's
 * `episodes_per_cell`), when it is not the 95% every Result reports as `ci95`; undefined otherwise.
 * Such a run's Result also carries the interval at that confidence (`ci_requested`).
 */
export function requestedConfidence(request: Record<string, unknown>): number | undefined {
  for (const field of ["episodes", "episodes_per_cell"] as const) {
    const value = request[field];
    if (typeof value !== "string") continue;
    const match = AUTO.exec(value);
    const ci = match ? Number(match[1]) : undefined;
    if (ci !== undefined && ci > 0 && ci < 1 && ci !== 0.95) return ci;
  }
  return undefined;
}

/**
 * Parses and sizes an EpisodesSpec. Throws AssayError episodes_invalid quoting the offending value.
 * `auto(ci=0.95, moe=0.05)` gives 381.
 */
export function parseEpisodesSpec(value: unknown): EpisodesSpec {
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < 1) throw invalid(value);
    if (value > MAX_EPISODES) throw invalid(value, `at most ${MAX_EPISODES} episodes per run`);
    return { kind: "count", count: value };
  }
  if (typeof value !== "string") throw invalid(value);
  const match = AUTO.exec(value);
  if (!match) throw invalid(value);
  const ci = Number(match[1]);
  const moe = Number(match[2]);
  if (!(ci > 0 && ci < 1)) throw invalid(value, `ci must be strictly between 0 and 1`);
  if (!(moe > 0 && moe < 1)) throw invalid(value, `moe must be strictly between 0 and 1`);
  const count = wilsonSampleSize(ci, moe, 0.5);
  if (count > MAX_EPISODES) throw invalid(value, `sizes to ${count} episodes; at most ${MAX_EPISODES} per run, widen moe`);
  return { kind: "auto", ci, moe, count };
}

/**
 * An account's metered cost in a UTC month, exactly `computeUsage(...).usdTotal` (usage.ts), from one
 * aggregate statement instead of every episode of every run of the account. The hard monthly budget is
 * checked after every metered episode of such an account (budgets.ts `monthlyCapReached`, through the
 * budget guard), so reading the account's episodes there cost each episode the account's whole history.
 *
 * Each billing line (a run's unit in the month) is rounded from the engine's sum of its seconds, which
 * may differ from the meters' own sum in the last bits: as for a run's money (scheduler/run-money.ts) the
 * total comes as two bounds, equal unless a sum lies on a rounding boundary, and a decision that differs
 * between them asks `computeUsage` itself. So does a month with a finished episode whose `finished_at` is
 * not a timestamp of the form the coordinator writes, where comparing text would not compare instants.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { lineBetween, runMeterContexts, sumMeters, type Meters, type SecondsSum } from "../runs/meters.js";
import type { Db } from "../store/database.js";
import { readAccountMonthParts } from "../store/episode-subsets-repo.js";
import type { Interruption } from "../store/episodes-repo.js";
import { getRun } from "../store/runs-repo.js";
import { computeUsage, periodOf } from "./usage.js";

/** First instant of the month `period` (`YYYY-MM`) and of the next, as the coordinator writes timestamps. */
function monthBounds(period: string): { from: string; before: string } {
  const [year, month] = period.split("-").map(Number);
  return { from: new Date(Date.UTC(year, month - 1, 1)).toISOString(), before: new Date(Date.UTC(year, month, 1)).toISOString() };
}

/**
 * The account's usage total in `period` (USD), `computeUsage(db, pins, accountId, period).usdTotal`, as two
 * bounds `lowUsd <= total <= highUsd`, equal unless a line's sum lies on a rounding boundary; `exact()`
 * computes the total itself.
 */
export async function monthSpendUsd(db: Db, pins: FirmwarePins, accountId: string, period: string): Promise<{ lowUsd: number; highUsd: number; exact(): Promise<number> }> {
  const exact = async () => (await computeUsage(db, pins, accountId, period)).usdTotal;
  const known = async () => {
    const usd = await exact();
    return { lowUsd: usd, highUsd: usd, exact: async () => usd };
  };
  const { from, before } = monthBounds(period);
  const parts = await readAccountMonthParts(db, accountId, from, before);
  if (parts.some((p) => p.part === "unusual" && (p.terms ?? 0) > 0)) return known();
  // By run, in the order usage lists them (created, then id), and by unit.
  const runs = new Map<string, { created: string; units: Map<number, SecondsSum> }>();
  const lineOf = (runId: string, created: string, unit: number): SecondsSum => {
    const run = runs.get(runId) ?? { created, units: new Map<number, SecondsSum>() };
    runs.set(runId, run);
    const line = run.units.get(unit) ?? { seconds: 0, absSeconds: 0, terms: 0 };
    run.units.set(unit, line);
    return line;
  };
  for (const part of parts) {
    if (part.part === "finished") {
      const line = lineOf(part.run_id!, part.created!, part.unit!);
      line.seconds += part.seconds ?? 0;
      line.absSeconds += part.abs_seconds ?? 0;
      line.terms += part.terms ?? 0;
    } else if (part.part === "interrupted") {
      for (const entry of JSON.parse(part.interruptions || "[]") as Interruption[]) {
        if (periodOf(entry.at) !== period || !Number.isFinite(entry.duration_s)) continue;
        const line = lineOf(part.run_id!, part.created!, part.unit!);
        line.seconds += entry.duration_s;
        line.absSeconds += Math.abs(entry.duration_s);
        line.terms += 1;
      }
    }
  }
  const ordered = [...runs.entries()].sort(([idA, a], [idB, b]) => (a.created < b.created ? -1 : a.created > b.created ? 1 : idA < idB ? -1 : idA > idB ? 1 : 0));
  const low: Meters[] = [];
  const high: Meters[] = [];
  for (const [runId, { units }] of ordered) {
    const run = await getRun(db, runId);
    if (!run) return known();
    const lines = runMeterContexts(pins, run).map((context, unit) => lineBetween(units.get(unit) ?? { seconds: 0, absSeconds: 0, terms: 0 }, context));
    low.push(sumMeters(lines.map((l) => l.low)));
    high.push(sumMeters(lines.map((l) => l.high)));
  }
  const lowUsd = sumMeters(low).costUsd;
  const highUsd = sumMeters(high).costUsd;
  return { lowUsd, highUsd, exact: highUsd === lowUsd ? async () => lowUsd : exact };
}

/**
 * A capped run's money as the budget guard decides from it (budget-guard.ts): what its episodes have
 * metered, the estimates of those in flight and the estimate of the next pending one. The guard asks at
 * every assignment and every metered episode of the run, so `readRunMoney` reads aggregates and bounded
 * rows, not the run's episodes: one statement (`readRunMoneyParts`) whose result does not grow with the run.
 *
 * The metered cost must be the Result's to the bit (meters.ts `meterByUnit`): each unit's hours are
 * rounded to 1e-6 h and the cost priced from the rounded hours. The engine adds the seconds in its own
 * order (SQLite compensates, PostgreSQL does not), which can differ from the meters' sum in the last
 * bits; so the aggregate gives the cost as two bounds, equal unless a unit's sum lies on a rounding
 * boundary (`roundedHoursBetween`; about one sum in 18 with durations in milliseconds). A decision that
 * is the same at both bounds is the decision at the exact cost; otherwise the guard asks
 * `readRunMoneyExactly`, which meters the run's episodes as the Result does.
 */
import { lineBetween, meterByUnit, sumMeters, type MeterContext, type SecondsSum } from "../runs/meters.js";
import type { Db } from "../store/database.js";
import type { Interruption } from "../store/episodes-repo.js";
import { listMoneyRows, readRunMoneyParts } from "../store/episode-subsets-repo.js";

export interface RunMoneyRead {
  /** The run's metered cost, exactly `meterByUnit(contexts, episodes).total.costUsd`. */
  spentUsd: number;
  /** Sum of the estimates of the episodes cells hold, in index order. */
  inFlightUsd: number;
  /** Estimate of the pending episode of the lowest index; undefined when none is pending. */
  firstPendingUsd: number | undefined;
}

/** `RunMoneyRead` with the metered cost as bounds: `spentLowUsd <= spentUsd <= spentHighUsd`, equal almost always. */
export interface RunMoneyBounds extends Omit<RunMoneyRead, "spentUsd"> {
  spentLowUsd: number;
  spentHighUsd: number;
}

function parsedInterruptions(text: string | null): Interruption[] {
  return JSON.parse(text || "[]") as Interruption[];
}

/**
 * The run's money from one aggregate statement. `perEpisodeUsd`: the estimate of one episode of each unit,
 * by unit index, as the guard prices them.
 */
export async function readRunMoney(db: Db, runId: string, contexts: readonly MeterContext[], perEpisodeUsd: readonly number[]): Promise<RunMoneyBounds> {
  const parts = await readRunMoneyParts(db, runId);
  const sums: SecondsSum[] = contexts.map(() => ({ seconds: 0, absSeconds: 0, terms: 0 }));
  const flight: Array<{ idx: number; unit: number }> = [];
  let firstPendingUsd: number | undefined;
  for (const part of parts) {
    const sum = sums[part.unit] as SecondsSum | undefined;
    if (part.part === "finished" && sum) {
      sum.seconds += part.seconds ?? 0;
      sum.absSeconds += part.abs_seconds ?? 0;
      sum.terms += part.terms ?? 0;
    } else if (part.part === "interrupted" && sum) {
      for (const entry of parsedInterruptions(part.interruptions)) {
        if (!Number.isFinite(entry.duration_s)) continue;
        sum.seconds += entry.duration_s;
        sum.absSeconds += Math.abs(entry.duration_s);
        sum.terms += 1;
      }
    } else if (part.part === "flight") flight.push({ idx: part.idx!, unit: part.unit });
    else if (part.part === "pending") firstPendingUsd = perEpisodeUsd[part.unit];
  }
  const inFlightUsd = flight.sort((a, b) => a.idx - b.idx).reduce((total, e) => total + perEpisodeUsd[e.unit], 0);
  const lines = sums.map((sum, unit) => lineBetween(sum, contexts[unit]));
  return { spentLowUsd: sumMeters(lines.map((l) => l.low)).costUsd, spentHighUsd: sumMeters(lines.map((l) => l.high)).costUsd, inFlightUsd, firstPendingUsd };
}

/** The money as the guard read it from the run's episodes before: the Result's own metering, the estimates in index order; one snapshot. */
export async function readRunMoneyExactly(db: Db, runId: string, contexts: readonly MeterContext[], perEpisodeUsd: readonly number[]): Promise<RunMoneyRead> {
  const rows = await listMoneyRows(db, runId);
  const metered = rows.map((r) => ({ unit: r.unit, status: r.status, durationS: r.duration_s, resetS: r.reset_s, interruptions: parsedInterruptions(r.interruptions) }));
  const pending = rows.find((r) => r.status === "pending");
  return {
    spentUsd: meterByUnit(contexts, metered).total.costUsd,
    inFlightUsd: rows.filter((r) => r.status === "assigned" || r.status === "running").reduce((total, r) => total + perEpisodeUsd[r.unit], 0),
    firstPendingUsd: pending ? perEpisodeUsd[pending.unit] : undefined,
  };
}

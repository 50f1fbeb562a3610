/**
 * A capped run's money as the budget guard decides from it (budget-guard.ts): what its episodes have
 * metered, the estimates of those in flight and the estimate of the next pending one. The guard asks at
 * every assignment and every metered episode of the run, so this reads aggregates and bounded rows,
 * not the run's episodes: one statement (`readRunMoneyParts`) whose size does not grow with the run.
 *
 * The metered cost must be the Result's to the bit (meters.ts `meterByUnit`): each unit's hours are
 * rounded to 1e-6 h and the cost priced from the rounded hours. The engine sums the seconds in its own
 * order (SQLite compensates, PostgreSQL does not), which can differ from the meters' sum in the last
 * bits; the rounded hours are the same unless the sum lies within that error of a rounding boundary
 * (durations in milliseconds do land on one about once in 3,600 sums). Then, and only then, the run's
 * episodes are read and metered as the Result meters them.
 */
import { meterByUnit, metersOfHours, roundsUnambiguously, sumMeters, type MeterContext, type Meters, type SecondsSum } from "../runs/meters.js";
import type { Db } from "../store/database.js";
import type { Interruption } from "../store/episodes-repo.js";
import { listMoneyRows, readRunMoneyParts, type MoneyRow } from "../store/episode-subsets-repo.js";

export interface RunMoneyRead {
  /** The run's metered meters, exactly `meterByUnit(contexts, episodes).total`. */
  spent: Meters;
  /** Sum of the estimates of the episodes cells hold, in index order. */
  inFlightUsd: number;
  /** Estimate of the pending episode of the lowest index; undefined when none is pending. */
  firstPendingUsd: number | undefined;
}

type UnitSum = SecondsSum;

function parsedInterruptions(text: string | null): Interruption[] {
  return JSON.parse(text || "[]") as Interruption[];
}

/**
 * The run's money. `perEpisodeUsd`: the estimate of one episode of each unit, by unit index, as the
 * guard prices them (an episode of a unit without a context is priced `perEpisodeUsd[unit]`, as before).
 */
export async function readRunMoney(db: Db, runId: string, contexts: readonly MeterContext[], perEpisodeUsd: readonly number[]): Promise<RunMoneyRead> {
  const parts = await readRunMoneyParts(db, runId);
  const sums: UnitSum[] = contexts.map(() => ({ seconds: 0, absSeconds: 0, terms: 0 }));
  const flight: Array<{ idx: number; unit: number }> = [];
  let firstPendingUsd: number | undefined;
  for (const part of parts) {
    const sum = sums[part.unit] as UnitSum | undefined;
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
  const lines: Meters[] = [];
  for (const [unit, sum] of sums.entries()) {
    const hours = sum.seconds / 3600;
    // One snapshot for all three figures, as the aggregate statement was.
    if (!roundsUnambiguously(hours, sum)) return exactMoney(contexts, perEpisodeUsd, await listMoneyRows(db, runId));
    lines.push(metersOfHours(hours, hours, contexts[unit]));
  }
  return { spent: sumMeters(lines), inFlightUsd, firstPendingUsd };
}

/** The money as the guard read it from the run's episodes before: the Result's own metering, the estimates in index order. */
function exactMoney(contexts: readonly MeterContext[], perEpisodeUsd: readonly number[], rows: readonly MoneyRow[]): RunMoneyRead {
  const metered = rows.map((r) => ({ unit: r.unit, status: r.status, durationS: r.duration_s, resetS: r.reset_s, interruptions: parsedInterruptions(r.interruptions) }));
  const pending = rows.find((r) => r.status === "pending");
  return {
    spent: meterByUnit(contexts, metered).total,
    inFlightUsd: rows.filter((r) => r.status === "assigned" || r.status === "running").reduce((total, r) => total + perEpisodeUsd[r.unit], 0),
    firstPendingUsd: pending ? perEpisodeUsd[pending.unit] : undefined,
  };
}

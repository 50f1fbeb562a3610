/**
 * Usage of an account in a UTC month, from the metered episodes: a finished attempt counts in the
 * month of its `finished_at`, an interrupted attempt in the month of its interruption. For every
 * run the month's share is metered exactly like the run's Result (coordinator/runs/meters.ts:
 * hours rounded to 6 decimals, cost to cents from the rounded hours); the month's figures are the
 * sums of those shares, rounded again to the same precision (which only removes floating-point
 * noise). So a month's usage equals the sum of the Results of the runs metered in it; a run whose
 * episodes straddle two months has each month's share rounded on its own.
 */
import type { FirmwarePins, Tier } from "../../firmware-pins/pins.js";
import { computeMeters, roundCents, roundHours, type MeteredEpisode, type Meters } from "../runs/meters.js";
import type { EnvironmentClass } from "../runs/price-list.js";
import { meterContextFor } from "../runs/run-results.js";
import type { Db } from "../store/database.js";
import type { EpisodeRow, Interruption } from "../store/episodes-repo.js";

export interface UsageFigures {
  period: string;
  robotHours: Record<Tier, number>;
  envHours: Record<EnvironmentClass, number>;
  usdTotal: number;
}

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function isPeriod(text: string): boolean {
  return PERIOD.test(text);
}

/** `YYYY-MM` of an ISO timestamp (UTC). */
export function periodOf(at: Date | string): string {
  return (typeof at === "string" ? new Date(at) : at).toISOString().slice(0, 7);
}

/** First instant after the month `period`, as an ISO string. */
function periodEnd(period: string): string {
  const [year, month] = period.split("-").map(Number);
  return new Date(Date.UTC(year, month, 1)).toISOString();
}

/** The episodes of one run restricted to what was metered in `period` (same row shape). */
export function episodesMeteredIn(episodes: readonly EpisodeRow[], period: string): MeteredEpisode[] {
  return episodes.map((e) => {
    const interruptions = (JSON.parse(e.interruptions || "[]") as Interruption[]).filter((i) => periodOf(i.at) === period);
    const doneHere = e.status === "done" && e.finished_at !== null && periodOf(e.finished_at) === period;
    return { status: doneHere ? "done" : "pending", duration_s: e.duration_s, reset_s: e.reset_s, interruptions: JSON.stringify(interruptions) };
  });
}

/** Each run's metered share of `period` for the account (runs with nothing metered left out). */
export function runSharesOf(db: Db, pins: FirmwarePins, accountId: string, period: string): Array<{ runId: string; tier: Tier; environmentClass: EnvironmentClass; meters: Meters }> {
  const runs = db
    .prepare("SELECT id, plan, priority FROM runs WHERE account_id = ? AND created < ? ORDER BY created, id")
    .all(accountId, periodEnd(period)) as Array<{ id: string; plan: string; priority: string }>;
  const episodesOf = db.prepare("SELECT * FROM episodes WHERE run_id = ? ORDER BY idx");
  const shares = [];
  for (const run of runs) {
    const context = meterContextFor(pins, run);
    const meters = computeMeters(episodesMeteredIn(episodesOf.all(run.id) as EpisodeRow[], period), context);
    if (meters.robotHours === 0 && meters.environmentHours === 0 && meters.costUsd === 0) continue;
    shares.push({ runId: run.id, tier: context.tier, environmentClass: context.environmentClass, meters });
  }
  return shares;
}

export function computeUsage(db: Db, pins: FirmwarePins, accountId: string, period: string): UsageFigures {
  if (!isPeriod(period)) throw new Error(`period must be YYYY-MM; got ${JSON.stringify(period)}`);
  const robotHours: Record<Tier, number> = { verify: 0, soak: 0 };
  const envHours: Record<EnvironmentClass, number> = { bare: 0, standard: 0, replica: 0, "instrumented-replica": 0 };
  let usd = 0;
  for (const share of runSharesOf(db, pins, accountId, period)) {
    robotHours[share.tier] += share.meters.robotHours;
    envHours[share.environmentClass] += share.meters.environmentHours;
    usd += share.meters.costUsd;
  }
  for (const key of Object.keys(robotHours) as Tier[]) robotHours[key] = roundHours(robotHours[key]);
  for (const key of Object.keys(envHours) as EnvironmentClass[]) envHours[key] = roundHours(envHours[key]);
  return { period, robotHours, envHours, usdTotal: roundCents(usd) };
}

/**
 * Usage of an account in a UTC month, from the metered episodes: a finished attempt counts in the
 * month of its `finished_at`, an interrupted attempt in the month of its interruption. Each run's
 * share of the month is metered by the one metering path (coordinator/runs/meters.ts
 * `meterByUnit`): one billing line per unit, at the unit's tier and environment class, with the
 * rounding rule there. robot_hours are split by each line's tier, env_hours by its class; every
 * figure is the sum of the lines, rounded again to the same precision (only removing
 * floating-point noise). So a month's usage equals the sum of the Results of the runs metered in
 * it, which are sums of the same lines; a run whose episodes straddle two months has each month's
 * lines rounded on their own.
 */
import type { FirmwarePins, Tier } from "../../firmware-pins/pins.js";
import { meterByUnit, roundHours, runMeterContexts, sumMeters, type MeteredEpisode, type MeterLine, type Meters } from "../runs/meters.js";
import type { EnvironmentClass } from "../runs/price-list.js";
import type { Db } from "../store/database.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { readEpisodeRecords } from "../runs/episode-records.js";
import { listRunsOfAccountCreatedBefore } from "../store/run-queries-repo.js";
import { operatorLabelSeconds, operatorResetSeconds } from "../runs/operator-time.js";

export interface UsageFigures {
  period: string;
  robotHours: Record<Tier, number>;
  envHours: Record<EnvironmentClass, number>;
  usdTotal: number;
  /** Seconds people spent setting scenes for the metered attempts (coordinator/runs/operator-time.ts), to 0.1 s. */
  operatorResetS: number;
  /** Seconds cells waited for people's success labels of the episodes finished in the month, to 0.1 s. */
  operatorLabelS: number;
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

/** The episodes of one run restricted to what was metered in `period`. */
export function episodesMeteredIn(episodes: readonly EpisodeRecord[], period: string): Array<MeteredEpisode & { unit: number }> {
  return episodes.map((e) => {
    const interruptions = e.interruptions.filter((i) => periodOf(i.at) === period);
    const doneHere = (e.status === "done" || e.status === "unlabelled") && e.finishedAt !== null && periodOf(e.finishedAt) === period;
    return { status: doneHere ? "done" : "pending", durationS: e.durationS, resetS: e.resetS, interruptions, unit: e.unit };
  });
}

/** One run's share of a month: its billing lines (one per unit) and their total. */
export interface RunShare {
  runId: string;
  lines: MeterLine[];
  meters: Meters;
  /** Seconds of operator resets of the attempts metered in the period. */
  operatorResetS: number;
  /** Seconds cells waited for people's success labels of the episodes finished in the period. */
  operatorLabelS: number;
}

/** Each run's metered share of `period` for the account (runs with nothing metered left out). */
export async function runSharesOf(db: Db, pins: FirmwarePins, accountId: string, period: string): Promise<RunShare[]> {
  const runs = await listRunsOfAccountCreatedBefore(db, accountId, periodEnd(period));
  const shares: RunShare[] = [];
  for (const run of runs) {
    const episodes = await readEpisodeRecords(db, run.id);
    const { lines, total } = meterByUnit(runMeterContexts(pins, run), episodesMeteredIn(episodes, period));
    if (total.robotHours === 0 && total.environmentHours === 0 && total.costUsd === 0) continue;
    const finishedHere = (e: EpisodeRecord) => (e.status === "done" || e.status === "unlabelled") && e.finishedAt !== null && periodOf(e.finishedAt) === period;
    const operatorResetS = operatorResetSeconds(episodes.map((e) => ({
      status: finishedHere(e) ? e.status : "pending",
      operatorResetS: e.operatorResetS, interruptions: e.interruptions.filter((i) => periodOf(i.at) === period),
    }))).reduce((sum, s) => sum + s, 0);
    const operatorLabelS = operatorLabelSeconds(episodes.filter(finishedHere));
    shares.push({ runId: run.id, lines, meters: total, operatorResetS, operatorLabelS });
  }
  return shares;
}

export async function computeUsage(db: Db, pins: FirmwarePins, accountId: string, period: string): Promise<UsageFigures> {
  if (!isPeriod(period)) throw new Error(`period must be YYYY-MM; got ${JSON.stringify(period)}`);
  const robotHours: Record<Tier, number> = { verify: 0, soak: 0 };
  const envHours: Record<EnvironmentClass, number> = { bare: 0, standard: 0, replica: 0, "instrumented-replica": 0 };
  const shares = await runSharesOf(db, pins, accountId, period);
  for (const line of shares.flatMap((s) => s.lines)) {
    robotHours[line.context.tier] += line.meters.robotHours;
    envHours[line.context.environmentClass] += line.meters.environmentHours;
  }
  for (const key of Object.keys(robotHours) as Tier[]) robotHours[key] = roundHours(robotHours[key]);
  for (const key of Object.keys(envHours) as EnvironmentClass[]) envHours[key] = roundHours(envHours[key]);
  const operatorResetS = Math.round(shares.reduce((sum, s) => sum + s.operatorResetS, 0) * 10) / 10;
  const operatorLabelS = Math.round(shares.reduce((sum, s) => sum + s.operatorLabelS, 0) * 10) / 10;
  return { period, robotHours, envHours, usdTotal: sumMeters(shares.map((s) => s.meters)).costUsd, operatorResetS, operatorLabelS };
}

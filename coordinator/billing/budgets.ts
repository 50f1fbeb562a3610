/**
 * Monthly account budgets (PUT /v1/budgets). With `hard`, reaching `monthly_usd` in the current
 * UTC month rejects new runs (402 monthly_budget_exceeded) and halts the account's open runs.
 * `remaining_usd` is never stored: it is `monthly_usd` minus the month's usage, floored at 0.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { roundCents } from "../runs/meters.js";
import type { Db } from "../store/database.js";
import { findBudget, upsertBudget } from "../store/budgets-repo.js";
import { periodOf } from "./usage.js";
import { monthSpendUsd } from "./month-spend.js";

export interface Budget {
  monthlyUsd: number;
  hard: boolean;
  updated: string;
}

export async function getBudget(db: Db, accountId: string): Promise<Budget | undefined> {
  const row = await findBudget(db, accountId);
  return row ? { monthlyUsd: row.monthly_usd, hard: row.hard === 1, updated: row.updated } : undefined;
}

export async function putBudget(db: Db, accountId: string, budget: { monthlyUsd: number; hard: boolean }, now: Date): Promise<Budget> {
  const updated = now.toISOString();
  await upsertBudget(db, accountId, { monthly_usd: budget.monthlyUsd, hard: budget.hard ? 1 : 0, updated });
  return { ...budget, updated };
}

/** The Usage `budget` object for a month whose usage is `usdTotal`. */
export function budgetView(budget: Budget | undefined, usdTotal: number): { monthly_usd: number | null; hard: boolean; remaining_usd: number | null } {
  if (!budget) return { monthly_usd: null, hard: false, remaining_usd: null };
  return { monthly_usd: budget.monthlyUsd, hard: budget.hard, remaining_usd: Math.max(0, roundCents(budget.monthlyUsd - usdTotal)) };
}

/**
 * When the account has a hard budget that this month's usage has reached: a message saying so;
 * otherwise undefined.
 */
export async function monthlyCapReached(db: Db, pins: FirmwarePins, accountId: string, now: Date): Promise<string | undefined> {
  const budget = await getBudget(db, accountId);
  if (!budget?.hard) return undefined;
  const period = periodOf(now);
  // Checked after every metered episode of the account: from aggregates; the usage total itself once the cap may be reached.
  const bounds = await monthSpendUsd(db, pins, accountId, period);
  if (bounds.highUsd < budget.monthlyUsd) return undefined;
  const spent = await bounds.exact();
  if (spent < budget.monthlyUsd) return undefined;
  return `the account's hard monthly budget of $${budget.monthlyUsd.toFixed(2)} is reached ($${spent.toFixed(2)} used in ${period}); raise it with PUT /v1/budgets`;
}

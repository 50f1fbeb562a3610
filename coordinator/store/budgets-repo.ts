/** Monthly account budgets: rows of `budgets` (coordinator/billing/budgets.ts applies them). */
import type { Db } from "./database.js";

export interface BudgetRow {
  monthly_usd: number;
  /** 0 or 1. */
  hard: number;
  updated: string;
}

export async function findBudget(db: Db, accountId: string): Promise<BudgetRow | undefined> {
  return await db.prepare("SELECT monthly_usd, hard, updated FROM budgets WHERE account_id = ?").get(accountId) as BudgetRow | undefined;
}

/** Sets the account's budget, replacing any earlier one. */
export async function upsertBudget(db: Db, accountId: string, row: BudgetRow): Promise<void> {
  await db.prepare(
    `INSERT INTO budgets (account_id, monthly_usd, hard, updated) VALUES (?, ?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET monthly_usd = excluded.monthly_usd, hard = excluded.hard, updated = excluded.updated`,
  ).run(accountId, row.monthly_usd, row.hard, row.updated);
}

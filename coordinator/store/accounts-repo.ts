/** Customer accounts. A fresh coordinator has one, `acct_default`, which owns the admin key. */
import type { Db } from "./database.js";

export const DEFAULT_ACCOUNT_ID = "acct_default";

export interface AccountRow {
  id: string;
  name: string;
  leaderboard_opt_in: number;
  /** The display name published results appear under; null until the account opts in. */
  leaderboard_name: string | null;
  created: string;
}

/** Inserts the account when absent; returns true when it was created. */
export async function ensureAccount(db: Db, id: string, name: string, created: string): Promise<boolean> {
  return (await db.prepare(`INSERT INTO accounts (id, name, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`).run(id, name, created)).changes === 1;
}

export async function getAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return await db.prepare(`SELECT * FROM accounts WHERE id = ?`).get(id) as AccountRow | undefined;
}

/** Sets the account's leaderboard opt-in and display name (the name is kept when opting out). */
export async function setLeaderboardSettings(db: Db, id: string, optIn: boolean, name: string | null): Promise<void> {
  await db.prepare(`UPDATE accounts SET leaderboard_opt_in = ?, leaderboard_name = COALESCE(?, leaderboard_name) WHERE id = ?`).run(optIn ? 1 : 0, name, id);
}

/** Customer accounts. A fresh coordinator has one, `acct_default`, which owns the admin key. */
import type { Db } from "./database.js";

export const DEFAULT_ACCOUNT_ID = "acct_default";

export interface AccountRow {
  id: string;
  name: string;
  leaderboard_opt_in: number;
  created: string;
}

/** Inserts the account when absent; returns true when it was created. */
export function ensureAccount(db: Db, id: string, name: string, created: string): boolean {
  return db.prepare(`INSERT OR IGNORE INTO accounts (id, name, created) VALUES (?, ?, ?)`).run(id, name, created).changes === 1;
}

export function getAccount(db: Db, id: string): AccountRow | undefined {
  return db.prepare(`SELECT * FROM accounts WHERE id = ?`).get(id) as AccountRow | undefined;
}

/**
 * Customer accounts on either engine (prototype of ../accounts-repo.ts over Kysely; same rows,
 * same behaviour, async).
 */
import { sql } from "kysely";
import type { SqlStore } from "./open-store.js";

export interface AccountRow {
  id: string;
  name: string;
  leaderboard_opt_in: number;
  /** The display name published results appear under; null until the account opts in. */
  leaderboard_name: string | null;
  created: string;
}

/** Inserts the account when absent; returns true when it was created. */
export async function ensureAccount(store: SqlStore, id: string, name: string, created: string): Promise<boolean> {
  const result = await store.db
    .insertInto("accounts")
    .values({ id, name, created })
    .onConflict((oc) => oc.column("id").doNothing())
    .executeTakeFirst();
  return result.numInsertedOrUpdatedRows === 1n;
}

export async function getAccount(store: SqlStore, id: string): Promise<AccountRow | undefined> {
  return store.db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Sets the account's leaderboard opt-in and display name (the name is kept when opting out). */
export async function setLeaderboardSettings(store: SqlStore, id: string, optIn: boolean, name: string | null): Promise<void> {
  await store.db
    .updateTable("accounts")
    .set({ leaderboard_opt_in: optIn ? 1 : 0, leaderboard_name: sql<string | null>`COALESCE(${name}, leaderboard_name)` })
    .where("id", "=", id)
    .execute();
}

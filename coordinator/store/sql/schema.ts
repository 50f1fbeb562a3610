import type { Generated } from "kysely";

/**
 * The store's tables as Kysely sees them: one interface per table, columns as the SQL names them
 * (snake_case; repositories convert at their boundary). Only the tables ported so far are here;
 * a table joins when its repository is ported (docs/store-postgres-plan.md).
 */

/** accounts (migrations 1 and 9). `leaderboard_opt_in` is 0 or 1 on both dialects (DEFAULT 0). */
export interface AccountsTable {
  id: string;
  name: string;
  leaderboard_opt_in: Generated<number>;
  leaderboard_name: string | null;
  created: string;
}

export interface StoreSchema {
  accounts: AccountsTable;
}

/**
 * The accounts repository ported to Kysely (coordinator/store/sql/accounts-repo.ts) behaves the same
 * on SQLite and on PostgreSQL: the pattern every repository test follows once the store is ported.
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAccount, getAccount, setLeaderboardSettings } from "../../coordinator/store/sql/accounts-repo.js";
import { openSqlStore, type SqlStore, type StoreDialect } from "../../coordinator/store/sql/open-store.js";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../support/embedded-postgres.js";

const CREATED = "2024-05-01T12:00:00.000Z";

for (const dialect of ["sqlite", "postgres"] satisfies StoreDialect[]) {
  describe(`accounts repository on ${dialect}`, function () {
    this.timeout(120_000);
    let server: EmbeddedPostgresServer | undefined;
    let dir: string | undefined;
    let store: SqlStore;

    before(async () => {
      if (dialect === "postgres") {
        server = await startEmbeddedPostgres();
        store = await openSqlStore({ databaseUrl: server.connectionString });
      } else {
        dir = mkdtempSync(join(tmpdir(), "assay-accounts-"));
        store = await openSqlStore({ sqlitePath: join(dir, "assay.sqlite") });
      }
      assert.equal(store.dialect, dialect);
    });
    after(async () => {
      await store?.close();
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("creates an account once and says whether it did", async () => {
      assert.equal(await ensureAccount(store, "acct_one", "One", CREATED), true);
      assert.equal(await ensureAccount(store, "acct_one", "Renamed", CREATED), false);
      assert.deepEqual(await getAccount(store, "acct_one"), {
        id: "acct_one", name: "One", leaderboard_opt_in: 0, leaderboard_name: null, created: CREATED,
      });
    });

    it("reads nothing for an unknown account", async () => {
      assert.equal(await getAccount(store, "acct_missing"), undefined);
    });

    it("keeps the leaderboard name when the account opts out", async () => {
      await ensureAccount(store, "acct_board", "Board", CREATED);
      await setLeaderboardSettings(store, "acct_board", true, "Team Board");
      assert.deepEqual(await pick(store, "acct_board"), { leaderboard_opt_in: 1, leaderboard_name: "Team Board" });
      await setLeaderboardSettings(store, "acct_board", false, null);
      assert.deepEqual(await pick(store, "acct_board"), { leaderboard_opt_in: 0, leaderboard_name: "Team Board" });
    });

    it("creates an account once when callers race", async () => {
      const created = await Promise.all([1, 2, 3, 4].map((n) => ensureAccount(store, "acct_race", `Race ${n}`, CREATED)));
      assert.equal(created.filter(Boolean).length, 1);
    });
  });
}

async function pick(store: SqlStore, id: string): Promise<{ leaderboard_opt_in: number; leaderboard_name: string | null }> {
  const row = await getAccount(store, id);
  assert.ok(row, `account ${id} exists`);
  return { leaderboard_opt_in: row.leaderboard_opt_in, leaderboard_name: row.leaderboard_name };
}

/**
 * The retention sweep (coordinator/data/retention-sweeper.ts) on both engines, with a real disk store: run by run,
 * a page of runs at a time, each run's files stored at or before its own cutoff (now less its data.retention;
 * isPastRetention's rule, inclusive) marked purged and their objects deleted, PURGE_PAGE_EPISODES episodes at a time
 * under one receipt per run and sweep; pending files, files not yet expired and other runs' files left as they are.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { artifactKey } from "../../coordinator/artifacts/artifact-store.js";
import { PURGE_PAGE_EPISODES } from "../../coordinator/data/purge.js";
import { sweepRetention } from "../../coordinator/data/retention-sweeper.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { insertPendingArtifact, listArtifacts, upsertStoredArtifact } from "../../coordinator/store/artifacts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { backfillEpisodes, episodeId, insertRun } from "../../coordinator/store/runs-repo.js";
import { seedLargeRun } from "../support/large-run.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const NOW = new Date("2026-11-29T12:00:00.000Z");
const HOUR_MS = 3_600_000;
const at = (msBeforeNow: number) => new Date(NOW.getTime() - msBeforeNow).toISOString();

for (const engine of STORE_ENGINES) {
  describe(`the retention sweep (${engine})`, () => {
    let db: Db;
    let dir: string;
    let objects: DiskStore;

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default", NOW.toISOString());
      dir = mkdtempSync(join(tmpdir(), "assay-retention-"));
      objects = new DiskStore(dir);
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A run submitted with `retention` (none: the default, 30 d) whose episode i has one file stored at storedAt[i] (null: pending), each with its object. */
    async function runWithFiles(runId: string, retention: string | undefined, storedAt: Array<string | null>): Promise<void> {
      await insertRun(db, {
        id: runId, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created: at(400 * 24 * HOUR_MS),
        request: { robot: "so101@3.11", episodes: storedAt.length, policy: { type: "container", image: "lab/policy:1" }, ...(retention ? { data: { retention } } : {}) },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 5, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: storedAt.length,
      });
      while (await backfillEpisodes(db, runId));
      for (const [i, stored] of storedAt.entries()) {
        const file = { episodeId: episodeId(runId, i), runId, kind: "mcap", fileName: `${episodeId(runId, i)}.mcap`, bytes: 3, sha256: "ab".repeat(32) };
        if (stored === null) await insertPendingArtifact(db, file);
        else await upsertStoredArtifact(db, { ...file, storedAt: stored });
        await objects.put(artifactKey({ runId, episodeId: file.episodeId, fileName: file.fileName }), Buffer.from("abc"));
      }
    }
    const statuses = async (runId: string) => (await listArtifacts(db, runId)).sort((a, b) => a.episode_id.localeCompare(b.episode_id)).map((a) => a.status);
    const objectThere = async (runId: string, i: number) => {
      try {
        await objects.head(artifactKey({ runId, episodeId: episodeId(runId, i), fileName: `${episodeId(runId, i)}.mcap` }));
        return true;
      } catch {
        return false;
      }
    };
    const receipts = async () => await db.prepare("SELECT run_id, reason, purged_at FROM purges ORDER BY run_id").all() as Array<{ run_id: string; reason: string; purged_at: string }>;

    it("purges each run's files stored at or before its own cutoff, a page of runs at a time, and nothing else", async () => {
      // 1 h retention: stored exactly at the cutoff (expired), 1 ms after it (kept), long before (expired), pending.
      await runWithFiles("run_a", "1h", [at(HOUR_MS), at(HOUR_MS - 1), at(50 * HOUR_MS), null]);
      // 2 d: the 1 h run's ages are all kept here, one of 49 h is not.
      await runWithFiles("run_b", "2d", [at(HOUR_MS), at(49 * HOUR_MS)]);
      // The default (30 d), and a retention so long its cutoff is before 1970: nothing of either expires.
      await runWithFiles("run_c", undefined, [at(29 * 24 * HOUR_MS), at(31 * 24 * HOUR_MS)]);
      await runWithFiles("run_d", "99999999d", [at(300 * 24 * HOUR_MS)]);
      await runWithFiles("run_e", "1h", []);

      assert.equal(await sweepRetention(db, objects, NOW, 2), 4, "pages of 2 runs: 3 pages, every run looked at");
      assert.deepEqual(await statuses("run_a"), ["purged", "stored", "purged", "pending"]);
      assert.deepEqual(await statuses("run_b"), ["stored", "purged"]);
      assert.deepEqual(await statuses("run_c"), ["stored", "purged"]);
      assert.deepEqual(await statuses("run_d"), ["stored"]);
      assert.deepEqual([await objectThere("run_a", 0), await objectThere("run_a", 1), await objectThere("run_a", 2), await objectThere("run_a", 3)], [false, true, false, true]);
      assert.deepEqual([await objectThere("run_b", 0), await objectThere("run_b", 1)], [true, false]);
      assert.deepEqual([await objectThere("run_c", 0), await objectThere("run_c", 1), await objectThere("run_d", 0)], [true, false, true]);
      assert.deepEqual((await receipts()).map((r) => [r.run_id, r.reason, r.purged_at]), [["run_a", "retention", NOW.toISOString()], ["run_b", "retention", NOW.toISOString()], ["run_c", "retention", NOW.toISOString()]]);

      // A sweep a minute later finds the 1 ms file past its cutoff, and nothing it purged before.
      assert.equal(await sweepRetention(db, objects, new Date(NOW.getTime() + 60_000)), 1);
      assert.deepEqual(await statuses("run_a"), ["purged", "purged", "purged", "pending"]);
      assert.equal((await receipts()).length, 4, "one receipt per run and sweep");
    });

    it("marks a run's expired files a page of PURGE_PAGE_EPISODES episodes at a time under one receipt, pending ones left", async () => {
      // 250 episodes (three pages) with four files each, one episode in 97 left pending and one file in five of the others pending.
      await seedLargeRun(db, "run_Many0000000000000001", 2.5 * PURGE_PAGE_EPISODES);
      const rows = await listArtifacts(db, "run_Many0000000000000001");
      const stored = rows.filter((r) => r.status === "stored").length;
      // seedLargeRun stores them now and submits no retention (30 d): 31 days on, all have expired.
      assert.equal(await sweepRetention(db, objects, new Date(Date.now() + 31 * 24 * HOUR_MS)), stored);
      const after = await listArtifacts(db, "run_Many0000000000000001");
      assert.equal(after.filter((r) => r.status === "purged").length, stored);
      assert.equal(after.filter((r) => r.status === "pending").length, rows.filter((r) => r.status === "pending").length);
      assert.deepEqual((await receipts()).map((r) => r.run_id), ["run_Many0000000000000001"]);
    });
  });
}

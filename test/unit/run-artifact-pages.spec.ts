/**
 * The repository reads that let an export request and a purge on request decide from a whole run without reading it
 * in one piece, on both engines: what an export decides from (any file purged, the first stored), whether any is stored
 * by an instant and how many are gone by it (the retention bound, inclusive as isPastRetention is), episode pages by
 * index, and a page's rows marked purged.
 */
import assert from "node:assert/strict";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { anyArtifactStoredBy, countRunArtifactsGone, listArtifacts, summarizeRunArtifacts } from "../../coordinator/store/artifacts-repo.js";
import { listEpisodeIdsPage, markArtifactsOfEpisodesPurged } from "../../coordinator/store/done-episodes-repo.js";
import { seedLargeRun } from "../support/large-run.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const RUN = "run_ArtifactPages00000001";
const EPISODES = 250;

for (const engine of STORE_ENGINES) {
  describe(`a run's artifact rows in aggregate and by pages (${engine})`, () => {
    it("summarizes, counts by the retention bound, pages the episodes and marks a page purged", async () => {
      const db = await openTestDatabase(engine);
      await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default", new Date().toISOString());
      await seedLargeRun(db, RUN, EPISODES);
      const rows = await listArtifacts(db, RUN);
      const stored = rows.filter((r) => r.status === "stored");
      const storedAt = stored[0]!.stored_at!;
      const before = new Date(Date.parse(storedAt) - 1).toISOString();
      assert.deepEqual(await summarizeRunArtifacts(db, RUN), { anyPurged: false, firstStoredAt: storedAt, firstKeptAt: storedAt });
      assert.deepEqual(await summarizeRunArtifacts(db, "run_None"), { anyPurged: false, firstStoredAt: null, firstKeptAt: null });
      assert.deepEqual(await countRunArtifactsGone(db, RUN, storedAt), { total: rows.length, gone: stored.length }, "stored at the bound counts (isPastRetention: now >= stored + retention)");
      assert.deepEqual(await countRunArtifactsGone(db, RUN, before), { total: rows.length, gone: 0 });
      assert.deepEqual(await countRunArtifactsGone(db, "run_None", storedAt), { total: 0, gone: 0 });
      assert.equal(await anyArtifactStoredBy(db, RUN, storedAt), true);
      assert.equal(await anyArtifactStoredBy(db, RUN, before), false);

      const pages: Array<Array<{ id: string; idx: number }>> = [];
      for (let after = -1; ;) {
        const page = await listEpisodeIdsPage(db, RUN, after, 100);
        pages.push(page);
        if (page.length < 100) break;
        after = page[page.length - 1]!.idx;
      }
      assert.deepEqual(pages.map((p) => p.length), [100, 100, 50]);
      assert.deepEqual(pages.flat().map((e) => e.idx), Array.from({ length: EPISODES }, (_, i) => i), "every episode once, by index, pending ones too");

      const first = pages[0]!.map((e) => e.id);
      const ofFirst = rows.filter((r) => first.includes(r.episode_id)).length;
      assert.equal(await markArtifactsOfEpisodesPurged(db, first), ofFirst);
      assert.equal(await markArtifactsOfEpisodesPurged(db, first), 0, "rows already purged are not marked again");
      assert.equal(await markArtifactsOfEpisodesPurged(db, []), 0);
      assert.deepEqual(await summarizeRunArtifacts(db, RUN), { anyPurged: true, firstStoredAt: storedAt, firstKeptAt: storedAt });
      const kept = stored.filter((r) => !first.includes(r.episode_id)).length;
      assert.deepEqual(await countRunArtifactsGone(db, RUN, storedAt), { total: rows.length, gone: ofFirst + kept }, "purged rows are gone once, not also as stored");
      assert.deepEqual(await countRunArtifactsGone(db, RUN, before), { total: rows.length, gone: ofFirst });
      assert.equal(await anyArtifactStoredBy(db, RUN, before), false, "purged rows are not stored");
      // Every row purged: nothing is kept, the first stored row is still the first stored.
      await markArtifactsOfEpisodesPurged(db, pages.flat().map((e) => e.id));
      assert.deepEqual(await summarizeRunArtifacts(db, RUN), { anyPurged: true, firstStoredAt: storedAt, firstKeptAt: null });
      assert.equal(await anyArtifactStoredBy(db, RUN, storedAt), false);
      await db.close();
    });
  });
}

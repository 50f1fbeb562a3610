/**
 * A cell's EpisodeStarted and EpisodeFinished applied with their seq in one statement (PostgreSQL) or one transaction
 * (SQLite): store/sequenced-reports-repo.ts. Each applies in the usual case, all of it, and otherwise changes nothing,
 * so the transactional path (fleet/episode-messages.ts) decides: on both engines.
 */
import assert from "node:assert/strict";
import type { Db } from "../../coordinator/store/database.js";
import { assignEpisode, getEpisode, markEpisodeRunning } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { finishEpisodeInSequence, startEpisodeInSequence, type SequencedFinish } from "../../coordinator/store/sequenced-reports-repo.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const at = "2026-11-28T00:00:00.000Z";
const RUN = "run_seq1";

for (const engine of STORE_ENGINES) {
  describe(`sequenced reports in one statement (${engine})`, () => {
    let db: Db;

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      await db.prepare("INSERT INTO cells (id, token_sha256, model, enrolled) VALUES ('so101-a', 'x', 'so101', ?)").run(at);
      await db.prepare("INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created, deleted) VALUES (?, 'acct_1', 'http://x', ?, 's', ?, ?)")
        .run("we_failed", JSON.stringify(["episode.failed"]), at, null);
      await db.prepare("INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created, deleted) VALUES (?, 'acct_1', 'http://x', ?, 's', ?, ?)")
        .run("we_other", JSON.stringify(["run.completed"]), at, null);
      await runsRepo.insertRun(db, {
        id: RUN, accountId: "acct_1", kind: "run", created: at, request: { policy: { type: "container", image: "assay/ref-policy:expert" } },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: 3,
      });
      await db.prepare("UPDATE runs SET status = 'running' WHERE id = ?").run(RUN);
      await assignEpisode(db, runsRepo.episodeId(RUN, 0), "so101-a", at);
    });

    afterEach(() => db.close());

    const lastSeq = async () => (await db.prepare("SELECT last_seq_applied FROM cells WHERE id = 'so101-a'").get() as { last_seq_applied: number }).last_seq_applied;

    function finish(seq: number, overrides: Partial<SequencedFinish> = {}): SequencedFinish {
      return {
        cellId: "so101-a", seq, episodeId: runsRepo.episodeId(RUN, 0), runId: RUN, idx: 0, lockFreeKinds: ["run"],
        outcome: { cellId: "so101-a", outcome: "failure", failureCluster: "grasp_slip", durationS: 2.5, resetS: 1, replaySpecJson: null, metaJson: null, evaluationJson: null, finishedAt: at, attempt: 1 },
        artifacts: [{ kind: "mcap", fileName: "episode.mcap", bytes: 10, sha256: "AB".repeat(32) }],
        event: { id: "evt_1", type: "episode.failed", created: at, data: JSON.stringify({ run_id: RUN, index: 0 }) },
        ...overrides,
      };
    }

    it("starts an episode of a running run with its seq, and changes nothing when the seq is not the next", async () => {
      assert.equal(await startEpisodeInSequence(db, "so101-a", 2, runsRepo.episodeId(RUN, 0), at), false, "a gap");
      assert.equal((await getEpisode(db, runsRepo.episodeId(RUN, 0)))!.status, "assigned");
      assert.equal(await lastSeq(), 0);
      assert.equal(await startEpisodeInSequence(db, "so101-a", 1, runsRepo.episodeId(RUN, 1), at), false, "an episode the cell does not hold");
      assert.equal(await lastSeq(), 0);
      assert.equal(await startEpisodeInSequence(db, "so101-a", 1, runsRepo.episodeId(RUN, 0), at), true);
      assert.equal((await getEpisode(db, runsRepo.episodeId(RUN, 0)))!.status, "running");
      assert.equal(await lastSeq(), 1);
    });

    it("finishes an episode with its seq, artifacts, webhook event and deliveries, all at once", async () => {
      await markEpisodeRunning(db, runsRepo.episodeId(RUN, 0), "so101-a", at);
      await db.prepare("INSERT INTO budgets (account_id, monthly_usd, hard, updated) VALUES ('acct_1', 100, 1, ?)").run(at);
      const applied = await finishEpisodeInSequence(db, finish(1));
      assert.ok(applied);
      assert.equal(applied.run.id, RUN);
      assert.equal(applied.run.episodesTotal, 3);
      assert.deepEqual(applied.episode, { status: "running", attempt: 1, cell_id: "so101-a" });
      assert.equal(applied.hardBudget, true);
      const episode = (await getEpisode(db, runsRepo.episodeId(RUN, 0)))!;
      assert.equal(episode.status, "done");
      assert.equal(episode.outcome, "failure");
      assert.equal(episode.failure_cluster, "grasp_slip");
      assert.equal(episode.duration_s, 2.5);
      assert.equal(await lastSeq(), 1);
      assert.deepEqual(await db.prepare("SELECT kind, file_name, bytes, sha256, status FROM artifacts").all(), [{ kind: "mcap", file_name: "episode.mcap", bytes: 10, sha256: "ab".repeat(32), status: "pending" }]);
      assert.deepEqual(await db.prepare("SELECT id, account_id, type, created, data FROM webhook_events").all(),
        [{ id: "evt_1", account_id: "acct_1", type: "episode.failed", created: at, data: JSON.stringify({ run_id: RUN, index: 0 }) }]);
      assert.deepEqual(await db.prepare("SELECT event_id, endpoint_id, status, next_attempt_at FROM webhook_deliveries").all(),
        [{ event_id: "evt_1", endpoint_id: "we_failed", status: "pending", next_attempt_at: at }]);
      assert.equal(await finishEpisodeInSequence(db, finish(2)), undefined, "a second finish of the episode does not apply");
      assert.equal(await lastSeq(), 1);
    });

    for (const [what, prepare, change] of [
      ["the seq is not the next", async () => {}, { seq: 3 }],
      ["the run is not running", async (d: Db) => void await d.prepare("UPDATE runs SET status = 'stopped' WHERE id = ?").run(RUN), {}],
      ["the kind has a progress hook", async () => {}, { lockFreeKinds: ["eval"] }],
      ["the id names another index", async () => {}, { idx: 1 }],
      ["the episode is pending", async (d: Db) => void await d.prepare("UPDATE episodes SET status = 'pending', cell_id = NULL").run(), {}],
      ["a link_lost estimate of the attempt is to be superseded", async (d: Db) =>
        void await d.prepare("UPDATE episodes SET interruptions = ?").run(JSON.stringify([{ attempt: 1, cell: "so101-a", reason: "link_lost", detail: "x", at, duration_s: 2 }])), {}],
      ["the run lacks the image pin", async () => {}, { pin: { image: "assay/ref-policy:expert", id: `sha256:${"0".repeat(64)}`, repo_digests: [] } }],
    ] as Array<[string, (d: Db) => Promise<void>, Partial<SequencedFinish>]>) {
      it(`changes nothing when ${what}`, async () => {
        await prepare(db);
        const before = await getEpisode(db, runsRepo.episodeId(RUN, 0));
        assert.equal(await finishEpisodeInSequence(db, finish(1, change)), undefined);
        assert.deepEqual(await getEpisode(db, runsRepo.episodeId(RUN, 0)), before);
        assert.equal(await lastSeq(), 0);
        assert.deepEqual(await db.prepare("SELECT * FROM artifacts").all(), []);
        assert.deepEqual(await db.prepare("SELECT * FROM webhook_events").all(), []);
      });
    }

    it("applies a finish whose image pin the run holds already", async () => {
      const pin = { image: "assay/ref-policy:expert", id: `sha256:${"1".repeat(64)}`, repo_digests: ["assay/ref-policy@sha256:aa"] };
      await runsRepo.addPinnedImage(db, RUN, pin);
      const applied = await finishEpisodeInSequence(db, finish(1, { pin, event: undefined, outcome: { ...finish(1).outcome, outcome: "success", failureCluster: null } }));
      assert.ok(applied);
      assert.equal(applied.hardBudget, false);
      assert.deepEqual(await db.prepare("SELECT * FROM webhook_events").all(), []);
    });
  });
}

/**
 * The run lifecycle over a real SQLite store (in memory): transitions that throw, effects that
 * wait for the commit, and what ending a run implies. The cells are the only double.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { transitionEpisode } from "../../coordinator/domain/episode-state.js";
import { RunEvents, type RunEvent } from "../../coordinator/runs/run-events.js";
import { createRunLifecycle, type RunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import { transitionRun } from "../../coordinator/domain/run-state.js";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import {
  assignEpisode, claimPendingEpisodeOfStartedRun, getEpisode, listCellsHoldingEpisodes, markEpisodeRunning, markEpisodeRunningOfStartedRun,
} from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { transact } from "../../coordinator/store/tx.js";

for (const engine of STORE_ENGINES) {
  describe(`run lifecycle (${engine})`, () => {
    let db: Db;
    let events: RunEvent[];
    let cancels: string[];
    let lifecycle: RunLifecycle;
    const at = "2026-11-15T00:00:00.000Z";

    async function insertRun(id: string, episodes = 3): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "run", created: at, request: { policy: { type: "container", image: "assay/ref-policy:expert" } },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: episodes,
      });
    }

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      events = [];
      cancels = [];
      const runEvents = new RunEvents();
      // What a subscriber sees when the event arrives: the status must already be committed.
      runEvents.subscribe("*", (event) => {
        assert.equal(db.inTransaction, false, "status events are published after the commit");
        events.push(event);
      });
      lifecycle = createRunLifecycle({
        runEvents, pins: loadFirmwarePins(), baseUrl: "http://x", streamsUrl: "ws://x/streams", now: () => new Date(at),
        cells: { cancelEpisode: async (cell, episodeId) => (cancels.push(`${cell}:${episodeId}`), true) },
      });
    });

    afterEach(() => db.close());

    it("throws on moves the state machines do not allow", async () => {
      assert.throws(() => transitionRun("completed", "running"), /illegal run transition completed -> running/);
      assert.throws(() => transitionRun("queued", "completed"), /illegal run transition queued -> completed/);
      // done -> pending is legal since the operator station: a person marks a finished attempt invalid.
      assert.throws(() => transitionEpisode("done", "running"), /illegal episode transition done -> running/);
      assert.throws(() => transitionEpisode("unlabelled", "pending"), /illegal episode transition unlabelled -> pending/);
      assert.throws(() => transitionEpisode("cancelled", "assigned"), /illegal episode transition cancelled -> assigned/);
      await insertRun("run_x");
      await assert.rejects(() => runsRepo.setRunStatus(db, "run_x", "running"), /illegal run transition queued -> running/);
    });

    it("runs effects after the outermost commit and drops them on rollback", async () => {
      const seen: string[] = [];
      await transact(db, async (tx) => {
        tx.afterCommit(() => void seen.push(`outer committed: ${db.inTransaction}`));
        await transact(tx, async (inner) => inner.afterCommit(() => void seen.push("inner")));
        assert.deepEqual(seen, []);
      });
      assert.deepEqual(seen, ["outer committed: false", "inner"]);
      await assert.rejects(transact(db, async (tx) => {
        tx.afterCommit(() => void seen.push("rolled back"));
        throw new Error("boom");
      }), /boom/);
      assert.equal(seen.includes("rolled back"), false);
      await assert.rejects(db.transaction(async () => transact(db, async (tx) => tx.afterCommit(() => undefined))), /pass that transaction's Tx/);
    });

    it("claims and starts an episode without its run's lock only once the run has left queued (claim) and scheduling (start); reads which idle cells hold one", async () => {
      await insertRun("run_q");
      const [first, second] = [runsRepo.episodeId("run_q", 0), runsRepo.episodeId("run_q", 1)];
      assert.equal(await claimPendingEpisodeOfStartedRun(db, first, "so101-a", at), undefined, "a queued run moves with its first claim, in a transaction");
      await transact(db, async (tx) => {
        await assignEpisode(tx, first, "so101-a", at);
        await lifecycle.scheduled(tx, "run_q", "so101-a");
      });
      assert.deepEqual(await claimPendingEpisodeOfStartedRun(db, second, "so101-b", at), { attempt: 1, idx: 1, seed: (await getEpisode(db, second))!.seed });
      assert.equal(await claimPendingEpisodeOfStartedRun(db, second, "so101-c", at), undefined, "claimed once");
      assert.equal(await markEpisodeRunningOfStartedRun(db, first, "so101-a", at), false, "a scheduling run moves with its first start, under its lock");
      await transact(db, async (tx) => {
        assert.equal(await markEpisodeRunning(tx, first, "so101-a", at), true);
        await lifecycle.started(tx, "run_q", "so101-a");
      });
      assert.equal(await markEpisodeRunningOfStartedRun(db, second, "so101-c", at), false, "only the holder starts it");
      assert.equal(await markEpisodeRunningOfStartedRun(db, second, "so101-b", at), true);
      assert.deepEqual([(await getEpisode(db, first))!.status, (await getEpisode(db, second))!.status, (await runsRepo.getRun(db, "run_q"))!.status], ["running", "running", "running"]);
      assert.deepEqual([...await listCellsHoldingEpisodes(db, ["so101-b", "so101-c", "so101-a"])].sort(), ["so101-a", "so101-b"]);
      assert.deepEqual([...await listCellsHoldingEpisodes(db, [])], []);
    });

    it("ends a run once: status, cancelled pending episodes, the partial result, CancelEpisode, one status event", async () => {
      await insertRun("run_s");
      const held = runsRepo.episodeId("run_s", 0);
      await transact(db, async (tx) => {
        await assignEpisode(tx, held, "so101-b", at);
        await lifecycle.scheduled(tx, "run_s", "so101-b");
      });
      assert.equal((await runsRepo.getRun(db, "run_s"))!.status, "scheduling");
      assert.equal(await lifecycle.end(db, "run_s", { status: "stopped", code: "budget_exceeded", message: "cap reached" }), true);
      const run = (await runsRepo.getRun(db, "run_s"))!;
      assert.equal(run.status, "stopped");
      assert.equal(run.statusCode, "budget_exceeded");
      assert.equal(run.result?.n, 0);
      assert.deepEqual([(await getEpisode(db, runsRepo.episodeId("run_s", 1)))!.status, (await getEpisode(db, runsRepo.episodeId("run_s", 2)))!.status], ["cancelled", "cancelled"]);
      assert.equal((await getEpisode(db, held))!.status, "assigned");
      assert.deepEqual(cancels, [`so101-b:${held}`]);
      assert.deepEqual(events.map((e) => ({ ...(e.data as unknown as Record<string, unknown>), webrtc: ((e.data as unknown as { webrtc: string | null }).webrtc ?? null)?.replace(/\?token=[A-Za-z0-9_-]+\.[0-9a-f]{64}$/, "?token=<signed>") ?? null })), [
        { status: "scheduling", cell: "so101-b", webrtc: "ws://x/streams/cells/so101-b?token=<signed>" },
        { status: "stopped", cell: null, webrtc: null },
      ]);
      assert.equal(await lifecycle.end(db, "run_s", { status: "failed", message: "again" }), false);
      assert.equal(events.length, 2);
    });
  });
}

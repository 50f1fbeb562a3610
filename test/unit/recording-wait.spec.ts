/**
 * The bounded wait for recordings (runs/recording-wait.ts): the decision as pure functions, then on both engines a
 * run whose episodes are all done and whose recordings two cells never upload: it stays running and is shown waiting
 * (status_detail words, gauges) until `recordingWaitMs` after the newest pending one's episode finished; then the
 * sweep completes it, once even when two coordinators ask at the same moment, with the result as usual and the
 * recordings recorded missing; a late upload still moves a missing row to stored. The clock is injected.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { CellRegistry } from "../../coordinator/cells/registry.js";
import { createFleetMetrics } from "../../coordinator/cells/fleet-metrics.js";
import type { LinkContext } from "../../coordinator/fleet/link-context.js";
import { FinishesInFlight } from "../../coordinator/fleet/finishes-in-flight.js";
import { RecordingWaits } from "../../coordinator/fleet/recording-waits.js";
import { sweepFinishedRuns } from "../../coordinator/fleet/run-completion.js";
import { createRunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { formatWait, recordingWaitEndsAt, recordingWaitMessage, recordingWaitOver } from "../../coordinator/runs/recording-wait.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import type { Scheduler } from "../../coordinator/scheduler/scheduler.js";
import { getArtifact, insertPendingArtifact, listArtifacts, markArtifactStored, type PendingArtifactsOfCell } from "../../coordinator/store/artifacts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { assignEpisode, getEpisode, markEpisodeDone, markEpisodeRunning } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { transact } from "../../coordinator/store/tx.js";
import type { LiveHub } from "../../coordinator/streams/live-hub.js";
import type { ArtifactStore } from "../../coordinator/artifacts/artifact-store.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const HOUR_MS = 3_600_000;
const t0 = Date.parse("2026-11-28T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("the wait for recordings, decided", () => {
  const pending: PendingArtifactsOfCell[] = [
    { cellId: "so101-b", artifacts: 3, oldestFinishedAt: iso(t0), newestFinishedAt: iso(t0 + 10 * 60_000) },
    { cellId: "so101-c", artifacts: 1, oldestFinishedAt: iso(t0 + 5 * 60_000), newestFinishedAt: iso(t0 + 5 * 60_000) },
  ];

  it("ends recordingWaitMs after the newest pending recording's episode finished", () => {
    assert.equal(recordingWaitEndsAt(pending, 6 * HOUR_MS).toISOString(), iso(t0 + 10 * 60_000 + 6 * HOUR_MS));
    assert.equal(recordingWaitOver(pending, new Date(t0 + 10 * 60_000 + 6 * HOUR_MS - 1), 6 * HOUR_MS), false);
    assert.equal(recordingWaitOver(pending, new Date(t0 + 10 * 60_000 + 6 * HOUR_MS), 6 * HOUR_MS), true);
    assert.equal(recordingWaitOver([], new Date(t0 + 100 * HOUR_MS), 6 * HOUR_MS), false, "nothing pending: nothing to wait for, nothing to give up");
  });

  it("an episode with no finish time does not hold the run", () => {
    const odd = [{ cellId: "so101-b", artifacts: 1, oldestFinishedAt: null, newestFinishedAt: null }];
    assert.equal(recordingWaitOver(odd, new Date(t0), HOUR_MS), true);
  });

  it("says who holds how many, since when, until when and what to do", () => {
    const message = recordingWaitMessage(pending, recordingWaitEndsAt(pending, HOUR_MS));
    assert.equal(message,
      "every episode finished; waiting for 3 recordings from cell so101-b (pending since 2026-11-28T00:00:00.000Z), " +
      "1 recording from cell so101-c (pending since 2026-11-28T00:05:00.000Z) not uploaded yet. The run completes without them at " +
      "2026-11-28T01:10:00.000Z; to get them, start the cell's agent or restore its link or disk (it uploads on reconnecting)");
    assert.deepEqual([formatWait(6 * HOUR_MS), formatWait(90 * 60_000), formatWait(1500), formatWait(1)], ["6 h", "90 min", "1.5 s", "1 ms"]);
  });
});

for (const engine of STORE_ENGINES) {
  describe(`a run waiting for recordings (${engine})`, () => {
    let db: Db;
    let nowMs: number;
    const lines: string[] = [];
    const logger = { info: (l: string) => void lines.push(l), warn: (l: string) => void lines.push(l), error: (l: string) => void lines.push(l) };

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      nowMs = t0;
      lines.length = 0;
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      for (const cell of ["so101-b", "so101-c"]) {
        await db.prepare("INSERT INTO cells (id, token_sha256, model, enrolled) VALUES (?, 'x', 'so101', ?)").run(cell, iso(t0));
      }
    });

    afterEach(() => db.close());

    /** One coordinator on the shared store, its clock the test's. */
    function coordinator(): LinkContext {
      const runEvents = new RunEvents();
      const pins = loadFirmwarePins();
      const now = () => new Date(nowMs);
      const metrics = createFleetMetrics(createMetricsRegistry({ defaultMetrics: false }));
      const lifecycle = createRunLifecycle({
        runEvents, pins, baseUrl: "http://x", streamsUrl: "ws://x/streams", now, logger, recordingWaitMs: HOUR_MS,
        cells: { cancelEpisode: async () => true },
      });
      return {
        db, registry: new CellRegistry({ pins }), scheduler: { kickLocal() {}, kick() {} } as unknown as Scheduler, lifecycle, runEvents,
        store: {} as ArtifactStore, metrics, streamsUrl: "ws://x/streams", live: {} as LiveHub, heartbeatIntervalMs: 1000, logger, now,
        stopping: false, finishes: new FinishesInFlight(), recordingWaits: new RecordingWaits({ waitMs: HOUR_MS, logger, metrics }),
      };
    }

    /**
     * A running run of two episodes, done on so101-b (finished at t0) and so101-c (t0 + 10 min), each having announced
     * an MCAP and a video that were never uploaded.
     */
    async function doneRunWithPendingRecordings(ctx: LinkContext, id: string): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "run", created: iso(t0), request: { policy: { type: "container", image: "assay/ref-policy:expert" } },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: 2,
      });
      const cells = [[0, "so101-b", t0], [1, "so101-c", t0 + 10 * 60_000]] as const;
      await transact(db, async (tx) => {
        for (const [idx, cell] of cells) {
          await assignEpisode(tx, runsRepo.episodeId(id, idx), cell, iso(t0));
          await ctx.lifecycle.scheduled(tx, id, cell);
          await markEpisodeRunning(tx, runsRepo.episodeId(id, idx), cell, iso(t0));
          await ctx.lifecycle.started(tx, id, cell);
        }
      });
      for (const [idx, cell, finishedMs] of cells) {
        const episodeId = runsRepo.episodeId(id, idx);
        for (const kind of ["mcap", "video"]) {
          await insertPendingArtifact(db, { episodeId, runId: id, kind, fileName: `${episodeId}.${kind === "mcap" ? "mcap" : "mp4"}`, bytes: 10, sha256: "ab".repeat(32) });
        }
        await markEpisodeDone(db, episodeId, {
          cellId: cell, outcome: idx === 0 ? "success" : "failure", failureCluster: null, durationS: 2, resetS: 1, replaySpecJson: null, metaJson: null,
          evaluationJson: null, finishedAt: iso(finishedMs), attempt: 1,
        }, { ...(await getEpisode(db, episodeId))!, status: "running" });
      }
    }

    async function completedEvents(runId: string): Promise<number> {
      const rows = await db.prepare("SELECT data FROM webhook_events WHERE type = 'run.completed'").all() as Array<{ data: string }>;
      return rows.filter((row) => (JSON.parse(row.data) as { run: { id: string } }).run.id === runId).length;
    }

    async function gauge(ctx: LinkContext, name: keyof LinkContext["metrics"]): Promise<Array<{ labels: object; value: number }>> {
      return (await ctx.metrics[name].get()).values.map((v) => ({ labels: v.labels, value: v.value }));
    }

    it("waits, shown, until recordingWaitMs after the newest pending recording's episode finished, then completes once without them", async () => {
      const [one, two] = [coordinator(), coordinator()];
      await doneRunWithPendingRecordings(one, "run_w");

      // Within the wait: the run stays running, and both coordinators' sweeps show it.
      nowMs = t0 + 10 * 60_000 + HOUR_MS - 1;
      assert.equal(await one.lifecycle.progress(db, "run_w"), false);
      const seen = await sweepFinishedRuns(one, new Set());
      await sweepFinishedRuns(one, seen);
      await sweepFinishedRuns(two, await sweepFinishedRuns(two, new Set()));
      assert.equal((await runsRepo.getRun(db, "run_w"))!.status, "running");
      for (const ctx of [one, two]) {
        assert.match(ctx.recordingWaits!.reason("run_w")!, /^every episode finished; waiting for 2 recordings from cell so101-b \(pending since 2026-11-28T00:00:00\.000Z\), 2 recordings from cell so101-c \(pending since 2026-11-28T00:10:00\.000Z\) not uploaded yet\. The run completes without them at 2026-11-28T01:10:00\.000Z/);
      }
      assert.deepEqual(await gauge(one, "runsWaitingForRecordings"), [{ labels: {}, value: 1 }]);
      assert.deepEqual(await gauge(one, "recordingsAwaited"), [{ labels: { cell: "so101-b" }, value: 2 }, { labels: { cell: "so101-c" }, value: 2 }]);
      // so101-b's episode finished 70 min ago, so101-c's 60 min ago: both over the 15 min of "overdue".
      assert.deepEqual(await gauge(one, "recordingsOverdue"), [{ labels: { cell: "so101-b" }, value: 2 }, { labels: { cell: "so101-c" }, value: 2 }]);
      assert.equal(lines.filter((l) => l.startsWith("run run_w: every episode finished; waiting for")).length, 2, "logged once per coordinator");

      // The wait is over: both coordinators' sweeps ask at once; the run completes once, under its lock.
      nowMs = t0 + 10 * 60_000 + HOUR_MS;
      await Promise.all([sweepFinishedRuns(one, seen), sweepFinishedRuns(two, seen)]);
      const run = (await runsRepo.getRun(db, "run_w"))!;
      assert.equal(run.status, "completed");
      assert.equal(run.result?.n, 2, "the result counts the outcomes, which need no files");
      assert.equal(await completedEvents("run_w"), 1);
      const rows = await listArtifacts(db, "run_w");
      assert.deepEqual(rows.map((r) => [r.status, r.missing_since]), Array(4).fill(["pending", iso(nowMs)]), "recorded missing, still pending");
      assert.equal(lines.filter((l) => l === "run run_w: completed without 2 recordings from cell so101-b, 2 recordings from cell so101-c: not uploaded within 1 h of their episode's finish (recordingWaitMs); they are recorded missing and still taken if the cell uploads them later").length, 1);
      assert.equal(lines.some((l) => /completed by the sweep/.test(l)), false, "not reported as a completion a crash left behind");

      await sweepFinishedRuns(one, seen);
      assert.equal(one.recordingWaits!.reason("run_w"), undefined, "no longer shown waiting");
      assert.deepEqual(await gauge(one, "runsWaitingForRecordings"), [{ labels: {}, value: 0 }]);
      assert.deepEqual(await gauge(one, "recordingsOverdue"), []);
      assert.deepEqual(await gauge(one, "recordingsMissing"), [{ labels: { cell: "so101-b" }, value: 2 }, { labels: { cell: "so101-c" }, value: 2 }]);

      // A late upload: the missing row moves to stored like any pending one.
      const mcap = runsRepo.episodeId("run_w", 0);
      assert.equal(await markArtifactStored(db, mcap, "mcap", iso(nowMs + 1000)), true);
      assert.deepEqual(
        (({ status, stored_at, missing_since }) => ({ status, stored_at, missing_since }))((await getArtifact(db, mcap, "mcap"))!),
        { status: "stored", stored_at: iso(nowMs + 1000), missing_since: null },
      );
      await sweepFinishedRuns(one, seen);
      assert.deepEqual(await gauge(one, "recordingsMissing"), [{ labels: { cell: "so101-b" }, value: 1 }, { labels: { cell: "so101-c" }, value: 2 }]);
    });

    it("shows and ends every waiting run on each look, however many (the first sweep looked at the 100 oldest only)", async () => {
      const ctx = coordinator();
      const ids = Array.from({ length: 130 }, (_, i) => `run_m${String(i).padStart(3, "0")}`);
      for (const id of ids) await doneRunWithPendingRecordings(ctx, id);
      nowMs = t0 + 30 * 60_000;
      const seen = await sweepFinishedRuns(ctx, await sweepFinishedRuns(ctx, new Set()));
      assert.equal(seen.size, ids.length);
      assert.deepEqual(ids.filter((id) => ctx.recordingWaits!.reason(id) === undefined), [], "every run shown waiting");
      assert.deepEqual(await gauge(ctx, "runsWaitingForRecordings"), [{ labels: {}, value: ids.length }]);
      nowMs = t0 + 10 * 60_000 + HOUR_MS;
      await sweepFinishedRuns(ctx, seen);
      const statuses = await db.prepare("SELECT status, COUNT(*) AS n FROM runs GROUP BY status").all() as Array<{ status: string; n: number | string }>;
      assert.deepEqual(statuses.map((r) => [r.status, Number(r.n)]), [["completed", ids.length]]);
    });

    it("completes as soon as the last recording is stored, within the wait, with nothing missing", async () => {
      const ctx = coordinator();
      await doneRunWithPendingRecordings(ctx, "run_s");
      nowMs = t0 + 20 * 60_000;
      for (const [idx, kind] of [[0, "mcap"], [0, "video"], [1, "mcap"]] as const) {
        await markArtifactStored(db, runsRepo.episodeId("run_s", idx), kind, iso(nowMs));
        assert.equal(await ctx.lifecycle.progress(db, "run_s"), false);
      }
      await markArtifactStored(db, runsRepo.episodeId("run_s", 1), "video", iso(nowMs));
      assert.equal(await ctx.lifecycle.progress(db, "run_s"), true);
      assert.deepEqual((await listArtifacts(db, "run_s")).map((r) => [r.status, r.missing_since]), Array(4).fill(["stored", null]));
    });
  });
}

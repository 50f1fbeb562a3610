/**
 * A cell's EpisodeFinished of a run whose kind has no progress hook takes no lock that keeps the run's other finishes
 * out (fleet/episode-messages.ts, docs/store.md "Finishing without the run's lock"); the run's completion is asked
 * after the commit. Two coordinators (two link contexts on one store; on PostgreSQL two pooled connections) apply the
 * finishes of a run's last two episodes at once: the run ends exactly once. A coordinator that stops between a last
 * finish's commit and the question leaves a running run with nothing open: the sweep completes it. On SQLite, whose
 * transactions run one at a time, a finish takes the locked path, and the same holds.
 * The scheduler is the only double.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { AgentMessage } from "../../protocol/gen/cell.js";
import { CellRegistry } from "../../coordinator/cells/registry.js";
import { createFleetMetrics } from "../../coordinator/cells/fleet-metrics.js";
import { applySequenced } from "../../coordinator/fleet/episode-messages.js";
import type { LinkContext } from "../../coordinator/fleet/link-context.js";
import { FinishesInFlight } from "../../coordinator/fleet/finishes-in-flight.js";
import { sweepFinishedRuns } from "../../coordinator/fleet/run-completion.js";
import { createRunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { RunEvents, type RunEvent } from "../../coordinator/runs/run-events.js";
import type { Scheduler } from "../../coordinator/scheduler/scheduler.js";
import type { Db } from "../../coordinator/store/database.js";
import { assignEpisode, getEpisode, markEpisodeDone, markEpisodeRunning } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { transact } from "../../coordinator/store/tx.js";
import type { LiveHub } from "../../coordinator/streams/live-hub.js";
import type { ArtifactStore } from "../../coordinator/artifacts/artifact-store.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const at = "2026-11-28T00:00:00.000Z";
const quiet = { info() {}, warn() {}, error() {} };

for (const engine of STORE_ENGINES) {
  describe(`a finish without the run's lock (${engine})`, () => {
    let db: Db;
    /** Every statement the store sent, in order. */
    let statements: string[];

    beforeEach(async () => {
      statements = [];
      db = await openTestDatabase(engine, ":memory:", { onStatement: (sql) => void statements.push(sql) });
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      for (const cell of ["so101-a", "so101-b"]) {
        await db.prepare("INSERT INTO cells (id, token_sha256, model, enrolled) VALUES (?, 'x', 'so101', ?)").run(cell, at);
      }
    });

    afterEach(() => db.close());

    /** One coordinator: its own events, lifecycle and finishes in flight, on the shared store. */
    function coordinator(): { ctx: LinkContext; events: RunEvent[] } {
      const runEvents = new RunEvents();
      const events: RunEvent[] = [];
      runEvents.subscribe("*", (event) => void events.push(event));
      const pins = loadFirmwarePins();
      const lifecycle = createRunLifecycle({
        runEvents, pins, baseUrl: "http://x", streamsUrl: "ws://x/streams", now: () => new Date(at), logger: quiet,
        cells: { cancelEpisode: async () => true },
      });
      const scheduler = { kickLocal() {}, kick() {}, async episodeMetered() {} } as unknown as Scheduler;
      const ctx: LinkContext = {
        db, registry: new CellRegistry({ pins }), scheduler, lifecycle, runEvents, store: {} as ArtifactStore,
        metrics: createFleetMetrics(createMetricsRegistry({ defaultMetrics: false })), streamsUrl: "ws://x/streams", live: {} as LiveHub,
        heartbeatIntervalMs: 1000, logger: quiet, now: () => new Date(at), stopping: false, finishes: new FinishesInFlight(),
      };
      return { ctx, events };
    }

    /** A running run of `episodes` episodes, the first two running on so101-a and so101-b, the others done. */
    async function runningRun(ctx: LinkContext, id: string, episodes = 2): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "run", created: at, request: { policy: { type: "container", image: "assay/ref-policy:expert" } },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: episodes,
      });
      await transact(db, async (tx) => {
        for (const [idx, cell] of [[0, "so101-a"], [1, "so101-b"]] as const) {
          await assignEpisode(tx, runsRepo.episodeId(id, idx), cell, at);
          await ctx.lifecycle.scheduled(tx, id, cell);
          await markEpisodeRunning(tx, runsRepo.episodeId(id, idx), cell, at);
          await ctx.lifecycle.started(tx, id, cell);
        }
      });
      for (let idx = 2; idx < episodes; idx++) {
        await markEpisodeDone(db, runsRepo.episodeId(id, idx), { ...outcome("so101-a"), attempt: 0 }, { ...(await getEpisode(db, runsRepo.episodeId(id, idx)))!, status: "running" });
      }
    }

    function outcome(cellId: string) {
      return {
        cellId, outcome: "success" as const, failureCluster: null, durationS: 2, resetS: 1, replaySpecJson: null, metaJson: null, evaluationJson: null,
        finishedAt: at, attempt: 1,
      };
    }

    function finished(seq: number, episodeId: string): AgentMessage {
      return AgentMessage.fromPartial({ seq, episodeFinished: { episodeId, attempt: 1, outcome: "success", durationS: 2, resetS: 1, finishedAtMs: Date.parse(at) } });
    }

    async function completedEvents(runId: string): Promise<number> {
      const rows = await db.prepare("SELECT data FROM webhook_events WHERE type = 'run.completed'").all() as Array<{ data: string }>;
      return rows.filter((row) => (JSON.parse(row.data) as { run: { id: string } }).run.id === runId).length;
    }

    it("ends the run once when its last two episodes finish at once on two coordinators", async () => {
      const [one, two] = [coordinator(), coordinator()];
      const runs = ["run_r0", "run_r1", "run_r2", "run_r3", "run_r4", "run_r5"];
      for (const [i, runId] of runs.entries()) {
        await runningRun(one.ctx, runId);
        // Both finishes in flight together, each on its own coordinator (and connection).
        const applied = await Promise.all([
          applySequenced(one.ctx, "so101-a", finished(i + 1, runsRepo.episodeId(runId, 0))),
          applySequenced(two.ctx, "so101-b", finished(i + 1, runsRepo.episodeId(runId, 1))),
        ]);
        assert.deepEqual(applied, [true, true]);
        const run = (await runsRepo.getRun(db, runId))!;
        assert.equal(run.status, "completed", `${runId} completed`);
        assert.equal(run.result?.n, 2);
        assert.equal(await completedEvents(runId), 1, `${runId}: one run.completed webhook`);
        const ends = [...one.events, ...two.events].filter((e) => e.runId === runId && e.type === "status" && e.data.status === "completed");
        assert.equal(ends.length, 1, `${runId}: one status event`);
        // On the coordinator that ended the run, its own episode event came first.
        for (const { events } of [one, two]) {
          const mine = events.filter((e) => e.runId === runId && (e.type === "episode" || e.data.status === "completed")).map((e) => e.type);
          if (mine.includes("status")) assert.deepEqual(mine, ["episode", "status"]);
        }
      }
      assert.equal(one.ctx.finishes.has("run_r0") || two.ctx.finishes.has("run_r0"), false, "no finish left in flight");
    });

    it("a finish of a run whose kind has a progress hook goes straight to the locked path once the coordinator has met the run", async () => {
      const { ctx } = coordinator();
      const unit = { robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1", policy: { type: "scripted" } };
      await runsRepo.insertRun(db, {
        id: "run_cmp", accountId: "acct_1", kind: "compare", created: at, request: { kind: "compare" },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20, kind: { compare: { paired: false } } },
        priority: "standard", episodesTotal: 4, units: [{ ...unit, key: "policy:a", policy_name: "a" }, { ...unit, key: "policy:b", policy_name: "b" }],
        episodes: [0, 1, 2, 3].map((i) => ({ unit: i % 2, seed: i })),
      });
      const start = async (idx: number, cell: string) => transact(db, async (tx) => {
        await assignEpisode(tx, runsRepo.episodeId("run_cmp", idx), cell, at);
        await ctx.lifecycle.scheduled(tx, "run_cmp", cell);
        await markEpisodeRunning(tx, runsRepo.episodeId("run_cmp", idx), cell, at);
        await ctx.lifecycle.started(tx, "run_cmp", cell);
      });
      const finishCounted = async (seq: number, idx: number) => {
        const before = statements.length;
        assert.equal(await applySequenced(ctx, "so101-a", finished(seq, runsRepo.episodeId("run_cmp", idx))), true);
        return statements.length - before;
      };
      await start(0, "so101-a");
      const first = await finishCounted(1, 0);
      assert.equal(ctx.finishes.takesLock("run_cmp"), true);
      await start(1, "so101-a");
      const second = await finishCounted(2, 1);
      // PostgreSQL: the one-statement finish and the unlocked read of the run, which cannot apply to a compare run, are
      // spent on the first finish only. SQLite's finishes take the locked path from the start.
      assert.equal(first - second, engine === "postgres" ? 2 : 0, `statements: first finish ${first}, second ${second}`);
      assert.equal((await getEpisode(db, runsRepo.episodeId("run_cmp", 1)))!.status, "done");
    });

    it("orders one coordinator's finishes: the status event follows every episode event it published", async () => {
      const { ctx, events } = coordinator();
      await runningRun(ctx, "run_one", 3);
      await Promise.all([
        applySequenced(ctx, "so101-a", finished(1, runsRepo.episodeId("run_one", 0))),
        applySequenced(ctx, "so101-b", finished(1, runsRepo.episodeId("run_one", 1))),
      ]);
      assert.deepEqual(events.filter((e) => e.type === "episode" || e.data.status === "completed").map((e) => e.type), ["episode", "episode", "status"]);
      assert.equal(await completedEvents("run_one"), 1);
    });

    it("the sweep completes a run whose last finish committed but whose completion was never asked (a crash in between)", async () => {
      const { ctx, events } = coordinator();
      await runningRun(ctx, "run_c");
      // What a coordinator that stopped right after its finishes' commits leaves: every episode done, the run running.
      for (const [idx, cell] of [[0, "so101-a"], [1, "so101-b"]] as const) {
        await markEpisodeDone(db, runsRepo.episodeId("run_c", idx), outcome(cell));
      }
      assert.equal((await runsRepo.getRun(db, "run_c"))!.status, "running");
      const first = await sweepFinishedRuns(ctx, new Set());
      assert.deepEqual([...first], ["run_c"]);
      assert.equal((await runsRepo.getRun(db, "run_c"))!.status, "running", "a run is completed on the second look that finds it");
      ctx.finishes.enter("run_c");
      await sweepFinishedRuns(ctx, first);
      assert.equal((await runsRepo.getRun(db, "run_c"))!.status, "running", "not while a finish of the run is under way here");
      ctx.finishes.leave("run_c");
      await sweepFinishedRuns(ctx, first);
      assert.equal((await runsRepo.getRun(db, "run_c"))!.status, "completed");
      assert.equal(await completedEvents("run_c"), 1);
      assert.deepEqual([...await sweepFinishedRuns(ctx, first)], []);
      assert.equal(events.filter((e) => e.type === "status" && e.data.status === "completed").length, 1);
    });
  });
}

/**
 * The coordinator's half of operator resets (issue 26): the registry keeping what a cell needs from a
 * person, the store's invalidation (done -> pending, its attempt kept and still metered), the Result's
 * operator sections, and the station service's refusals, over a real store (SQLite and PostgreSQL)
 * with a recording stand-in for the cells' streams.
 */
import assert from "node:assert/strict";
import { createOperatorStation } from "../../coordinator/fleet/operator-station.js";
import { CellRegistry, type CellSession } from "../../coordinator/cells/registry.js";
import { episodeMoveAllowed } from "../../coordinator/domain/episode-state.js";
import { computeMeters } from "../../coordinator/runs/meters.js";
import { operatorSections } from "../../coordinator/runs/operator-time.js";
import { forgetArtifactsOfEpisode, insertPendingArtifact } from "../../coordinator/store/artifacts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import {
  assignEpisode, getEpisodeRecord, invalidateEpisode, lastFinishedEpisodeOfCell, listEpisodeRecords, markEpisodeDone, requeueEpisode,
} from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { Hello, type CoordinatorMessage } from "../../protocol/gen/cell.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const pins = loadFirmwarePins();
const installed = pins.installations[0];
const NOW = "2026-11-15T12:00:00.000Z";

function session(): CellSession {
  const hello = Hello.fromPartial({ cellId: installed.cell, robotModel: installed.model, firmware: installed.firmware, environment: "tabletop@1" });
  return { cellId: installed.cell, sessionId: "s1", hello, connectedAt: new Date(0).toISOString(), send: () => undefined, close: () => undefined };
}

describe("operator resets: registry and result sections", () => {
  it("a cell's Attention makes it awaiting_reset with the scene until it says it needs nobody", async () => {
    const registry = new CellRegistry({ pins });
    registry.attach(session());
    registry.setAssigned(installed.cell, "ep_1");
    registry.recordAttention(installed.cell, { kind: "reset", episodeId: "ep_1", sinceMs: Date.parse(NOW), sceneJson: JSON.stringify({ lighting: "dim", objects: {} }) });
    const [cell] = await registry.connectedCells();
    assert.equal(cell.state, "awaiting_reset");
    assert.deepEqual(cell.attention, { kind: "reset", episodeId: "ep_1", since: NOW, scene: { lighting: "dim", objects: {} } });
    registry.recordAttention(installed.cell, { kind: "", episodeId: "", sinceMs: 0, sceneJson: "" });
    assert.equal((await registry.connectedCells())[0].state, "busy", "answered: running its episode, before the next heartbeat says so");
    registry.recordHeartbeat(installed.cell, { sentAtMs: 0, state: "busy", episodeId: "ep_1", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] });
    assert.equal((await registry.connectedCells())[0].state, "busy");
    assert.equal((await registry.connectedCells())[0].attention, undefined);
    // A malformed scene from a cell still shows that a reset waits.
    registry.recordAttention(installed.cell, { kind: "reset", episodeId: "ep_1", sinceMs: 0, sceneJson: "{not json" });
    assert.deepEqual(registry.attentionOf(installed.cell)?.scene, {});
  });

  it("only an operator's invalidation moves a finished episode back to pending", () => {
    assert.equal(episodeMoveAllowed("done", "pending"), true);
    assert.equal(episodeMoveAllowed("done", "assigned"), false);
  });
});

for (const engine of STORE_ENGINES) {
  describe(`operator resets in the store and the station (${engine})`, () => {
    let db: Db;
    let sent: Array<[string, CoordinatorMessage]>;
    let kicks: number;

    const insertRun = (id: string, episodes = 3) => runsRepo.insertRun(db, {
      id, accountId: "acct_1", kind: "run", created: "2026-11-15T00:00:00.000Z", request: {},
      resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
      priority: "standard", episodesTotal: episodes,
    });
    const ep = (runId: string, idx: number) => runsRepo.episodeId(runId, idx);
    const finish = async (runId: string, idx: number, finishedAt: string, operatorResetS: number | null = 12.5) => {
      await assignEpisode(db, ep(runId, idx), "c1", finishedAt);
      return markEpisodeDone(db, ep(runId, idx), {
        cellId: "c1", outcome: "success", failureCluster: null, durationS: 20, resetS: 4, operatorResetS, replaySpecJson: null, metaJson: null, evaluationJson: null, finishedAt,
      });
    };
    const station = (connected = true) => createOperatorStation({
      db,
      fleet: {
        connectedCells: async () => (connected ? [{
          cellId: "c1", model: "so101", firmware: "3.11", environment: "tabletop@1", instruments: [], policyImages: [], state: "awaiting_reset", dutyCyclePct: 0,
          episodeId: ep("run_a", 2), connectedAt: NOW, attention: { kind: "reset" as const, episodeId: ep("run_a", 2), since: NOW, scene: {} },
        }] : []),
        assignedEpisodeOf: () => undefined,
      },
      sendToCell: async (cellId, message) => (sent.push([cellId, message]), true),
      scheduler: { kick: () => { kicks += 1; } },
      now: () => new Date(NOW),
      logger: { info: () => undefined },
    });

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      sent = [];
      kicks = 0;
    });
    afterEach(() => db.close());

    it("invalidates the cell's last finished episode: pending again, outcome kept only in its entry, still metered", async () => {
      await insertRun("run_a");
      await finish("run_a", 0, "2026-11-15T10:00:00.000Z");
      await finish("run_a", 1, "2026-11-15T11:00:00.000Z");
      await insertPendingArtifact(db, { episodeId: ep("run_a", 1), runId: "run_a", kind: "mcap", fileName: "x.mcap", bytes: 10, sha256: "ab".repeat(32) });
      assert.equal((await lastFinishedEpisodeOfCell(db, "c1"))?.id, ep("run_a", 1));
      const before = computeMeters(await listEpisodeRecords(db, "run_a"), { tier: "soak", environmentClass: "standard", priority: "standard" });

      assert.equal(await invalidateEpisode(db, ep("run_a", 1), { reason: "person_in_cell", note: "visitor", at: NOW }), true);
      assert.equal((await forgetArtifactsOfEpisode(db, ep("run_a", 1))).length, 1);
      const record = (await getEpisodeRecord(db, ep("run_a", 1)))!;
      assert.equal(record.status, "pending");
      assert.equal(record.outcome, null);
      assert.equal(record.operatorResetS, null);
      assert.deepEqual(record.interruptions, [{
        attempt: 1, cell: "c1", reason: "invalidated", detail: "marked invalid at the operator station: a person was in the cell (visitor)", at: NOW,
        duration_s: 24, operator_reset_s: 12.5, invalidated: { reason: "person_in_cell", note: "visitor", outcome: "success" },
      }]);
      // The robot was occupied either way: the meters do not change.
      assert.deepEqual(computeMeters(await listEpisodeRecords(db, "run_a"), { tier: "soak", environmentClass: "standard", priority: "standard" }), before);
      assert.equal((await lastFinishedEpisodeOfCell(db, "c1"))?.id, ep("run_a", 0), "the previous one is now the episode before");
      assert.equal(await invalidateEpisode(db, ep("run_a", 1), { reason: "scene_wrong", note: null, at: NOW }), false, "not finished: nothing to invalidate");

      const sections = operatorSections(await listEpisodeRecords(db, "run_a"));
      assert.deepEqual(sections.operator_time, { resets: 2, reset_s_total: 25, reset_s_mean: 12.5, reset_s_per_episode: 25 });
      assert.deepEqual(sections.invalidated, [{
        episode_id: ep("run_a", 1), index: 1, attempt: 1, cell: "c1", reason: "person_in_cell", note: "visitor", outcome: "success", at: NOW,
      }]);
    });

    it("counts operator time of interrupted attempts, and adds no sections when nobody was needed", async () => {
      await insertRun("run_b");
      await finish("run_b", 0, "2026-11-15T10:00:00.000Z", null);
      assert.deepEqual(operatorSections(await listEpisodeRecords(db, "run_b")), {});
      await assignEpisode(db, ep("run_b", 1), "c1", NOW);
      await requeueEpisode(db, ep("run_b", 1), "c1", { reason: "operator_abort", detail: "", at: NOW, duration_s: 3, operator_reset_s: 40 });
      assert.deepEqual(operatorSections(await listEpisodeRecords(db, "run_b")).operator_time, { resets: 1, reset_s_total: 40, reset_s_mean: 40, reset_s_per_episode: 40 });
    });

    it("the station relays answers, re-runs an invalidated episode, and refuses what a stale screen asks", async () => {
      await insertRun("run_a");
      await finish("run_a", 0, "2026-11-15T10:00:00.000Z");
      const s = station();
      assert.deepEqual(await s.confirmScene("c1"), { episodeId: ep("run_a", 2) });
      await assert.rejects(() => s.confirmScene("c1", "ep_other"), /waits for the scene of episode .* not "ep_other"/);
      assert.deepEqual(await s.abortEpisode("c1", "cable", ep("run_a", 2)), { episodeId: ep("run_a", 2) });
      assert.deepEqual(sent, [
        ["c1", { operatorAnswer: { episodeId: ep("run_a", 2), action: "scene_ready", detail: "" } }],
        ["c1", { operatorAnswer: { episodeId: ep("run_a", 2), action: "abort", detail: "cable" } }],
      ]);
      await assert.rejects(() => s.invalidatePrevious("c1", { reason: "scene_wrong", note: null, episodeId: "ep_other" }), /previous episode of cell "c1" is .*not "ep_other"/);
      const done = await s.invalidatePrevious("c1", { reason: "scene_wrong", note: null, episodeId: ep("run_a", 0) });
      assert.equal(done.episodeId, ep("run_a", 0));
      assert.equal(kicks, 1, "the scheduler is woken to give the episode out again");
      await assert.rejects(() => s.invalidatePrevious("c1", { reason: "scene_wrong", note: null }), /has no finished episode/);
      await assert.rejects(() => station(false).confirmScene("c1"), /cell "c1" is not connected/);
    });

    it("refuses to invalidate an episode of a run that has ended (its result is final)", async () => {
      await insertRun("run_c", 1);
      await finish("run_c", 0, "2026-11-15T10:00:00.000Z");
      await runsRepo.setRunStatus(db, "run_c", "scheduling", { at: NOW });
      await runsRepo.setRunStatus(db, "run_c", "running", { at: NOW });
      await runsRepo.setRunStatus(db, "run_c", "completed", { at: NOW });
      await assert.rejects(() => station().invalidatePrevious("c1", { reason: "hardware_fault", note: null }), /run run_c, which has ended \(completed\)/);
      assert.equal((await getEpisodeRecord(db, ep("run_c", 0)))!.status, "done");
    });
  });
}

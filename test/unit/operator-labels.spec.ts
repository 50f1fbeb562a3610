/**
 * Success judged by a person: the predicate language's operator.success (where it may stand, what
 * it binds to, what the cell's monitor makes of it), the station's label answer as the agent reads
 * it, the agent's awaiting_label moves, and the result's labels section (progress interval, unlabelled).
 */
import assert from "node:assert/strict";
import { nextAgentState } from "../../cell-agent/agent-state.js";
import { LabelGate, parseOperatorLabel } from "../../cell-agent/episode/label-gate.js";
import { operatorSections, progressInterval } from "../../coordinator/runs/operator-time.js";
import { episodeMoveAllowed } from "../../coordinator/domain/episode-state.js";
import type { EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import {
  checkBindings, compileTaskMonitor, formatPredicate, parsePredicate, parseTaskPredicates, PredicateSyntaxError, requiredInstruments, splitPersonJudged,
} from "../../protocol/predicates/index.js";

describe("operator.success in the predicate language", () => {
  it("parses, prints back, and binds to the operator instrument", () => {
    const predicate = parsePredicate("operator.success");
    assert.equal(formatPredicate(predicate), "operator.success");
    assert.deepEqual(requiredInstruments(predicate), ["operator"]);
    const task = { success_predicates: [{ judged: "operator.success" }, { lifted: "pose(cube).z > 0.06" }] };
    assert.deepEqual(checkBindings(task, ["mocap", "operator"]), []);
    assert.deepEqual(checkBindings(task, ["mocap"]).map((p) => [p.name, p.missing]), [["judged", ["operator"]]]);
  });

  it("stands alone as a success predicate: refused inside an expression, with a temporal suffix, or as a stage", () => {
    const refused = (task: object): string => {
      try {
        parseTaskPredicates(task);
      } catch (error) {
        assert.ok(error instanceof PredicateSyntaxError);
        return error.message;
      }
      assert.fail("expected a PredicateSyntaxError");
    };
    assert.match(refused({ success_predicates: [{ both: "operator.success and gripper.holding" }] }), /^success_predicates\[0\] "both": operator\.success must be a success predicate on its own/);
    assert.match(refused({ success_predicates: [{ held: "operator.success for 1s" }] }), /must be a success predicate on its own/);
    assert.match(refused({ success_predicates: [{ lifted: "pose(cube).z > 0.06" }], stages: [{ judged: "operator.success" }] }), /^stages\[0\] "judged": .*cannot be a stage; put it in success_predicates/);
  });

  it("splits a task into the predicates a person judges and the ones the instruments decide", () => {
    const task: { success_predicates: Array<Record<string, string>> } = { success_predicates: [{ judged: "operator.success" }, { lifted: "pose(cube).z > 0.06" }] };
    const { personJudged, instrumentTask } = splitPersonJudged(task);
    assert.deepEqual(personJudged, ["judged"]);
    assert.deepEqual(instrumentTask.success_predicates, [{ lifted: "pose(cube).z > 0.06" }]);
    assert.deepEqual(splitPersonJudged({ success_predicates: [{ lifted: "pose(cube).z > 0.06" }] }).personJudged, []);
  });

  it("is never satisfied during the episode, so the monitor never ends it early", () => {
    const monitor = compileTaskMonitor({ success_predicates: [{ judged: "operator.success" }] });
    monitor.update({ tS: 0, poses: {}, events: [] });
    monitor.update({ tS: 5, poses: {}, events: [] });
    const status = monitor.status();
    assert.equal(status.success, false);
    assert.deepEqual(status.predicates, { judged: { satisfied: false } });
  });
});

describe("the station's label answer on the cell", () => {
  it("reads success, progress 0-100 and a note, and refuses what it cannot use", () => {
    assert.deepEqual(parseOperatorLabel('{"success":true,"progress":80,"note":"ok"}'), { success: true, progress: 80, note: "ok" });
    assert.deepEqual(parseOperatorLabel('{"success":false,"progress":null,"note":null}'), { success: false, progress: null, note: null });
    assert.throws(() => parseOperatorLabel('{"progress":80}'), /needs "success": true or false/);
    assert.throws(() => parseOperatorLabel('{"success":true,"progress":101}'), /progress must be 0-100; got 101/);
    assert.throws(() => parseOperatorLabel("yes"), /not JSON/);
  });

  it("resolves the wait of its episode only; the timeout ends it without a label", async () => {
    const gate = new LabelGate();
    const controller = new AbortController();
    const waiting = gate.wait("ep_1", 60_000, controller.signal);
    assert.equal(gate.answer("ep_2", { success: true, progress: null, note: null }), false);
    assert.equal(gate.answer("ep_1", { success: true, progress: 50, note: null }), true);
    assert.deepEqual(await waiting, { success: true, progress: 50, note: null });
    assert.equal(await gate.wait("ep_3", 1, controller.signal), null);
    const aborted = gate.wait("ep_4", 60_000, controller.signal);
    controller.abort();
    assert.equal(await aborted, null);
  });

  it("awaiting_label is busy waiting for a person, with its own moves", () => {
    assert.equal(nextAgentState("busy", "await_label"), "awaiting_label");
    assert.equal(nextAgentState("awaiting_label", "labelled"), "busy");
    assert.equal(nextAgentState("awaiting_label", "estop"), "estopped");
    assert.throws(() => nextAgentState("idle", "await_label"), /cannot await label while idle/);
  });
});

describe("unlabelled episodes and the labels section of a result", () => {
  it("unlabelled is reached from a held episode and is final", () => {
    assert.ok(episodeMoveAllowed("running", "unlabelled"));
    assert.ok(episodeMoveAllowed("assigned", "unlabelled"));
    assert.ok(!episodeMoveAllowed("unlabelled", "pending"));
    assert.ok(!episodeMoveAllowed("done", "unlabelled"));
  });

  it("the progress mean has a 95% Student t interval, clipped to 0-100", () => {
    assert.equal(progressInterval([]), null);
    assert.deepEqual(progressInterval([70]), { n: 1, mean: 70, ci95: null });
    // mean 50, sd 20/sqrt(3), n 4: t(0.975, 3) = 3.182446305, half-width 18.4
    const p = progressInterval([40, 60, 40, 60])!;
    assert.equal(p.mean, 50);
    assert.deepEqual(p.ci95, [Math.round((50 - 3.182446305 * (20 / Math.sqrt(3)) / 2) * 10) / 10, Math.round((50 + 3.182446305 * (20 / Math.sqrt(3)) / 2) * 10) / 10]);
    assert.deepEqual(progressInterval([100, 100, 90])!.ci95![1], 100);
  });

  it("says who judged, lists unlabelled episodes and counts the labelling time", () => {
    const base = { runId: "run_1", attempt: 1, seed: 1, failureCluster: null, durationS: 10, resetS: 1, operatorResetS: null, replaySpec: null, meta: null,
      evaluation: null, interruptions: [] as EpisodeRecord["interruptions"], assignedAt: null, startedAt: null, unit: 0, assign: {} };
    const episode = (idx: number, status: EpisodeRecord["status"], outcome: EpisodeRecord["outcome"], label: EpisodeRecord["label"]): EpisodeRecord =>
      ({ ...base, id: `ep_${idx}`, idx, status, cellId: "so101-b", outcome, label, finishedAt: `2026-11-27T10:0${idx}:00.000Z` });
    const sections = operatorSections([
      episode(0, "done", "success", { judgedBy: "human", progress: 90, note: null, waitedS: 4 }),
      episode(1, "done", "failure", { judgedBy: "human", progress: 30, note: "dropped", waitedS: 6 }),
      episode(2, "unlabelled", null, { judgedBy: null, progress: null, note: null, waitedS: 600 }),
    ]);
    assert.equal(sections.labels?.judged_by, "human");
    assert.equal(sections.labels?.labelled, 2);
    assert.equal(sections.labels?.progress?.mean, 60);
    assert.equal(sections.labels?.label_s_total, 610);
    assert.equal(sections.labels?.label_s_per_episode, 305);
    assert.deepEqual(sections.labels?.unlabelled, [{ episode_id: "ep_2", index: 2, cell: "so101-b", waited_s: 600, finished_at: "2026-11-27T10:02:00.000Z" }]);
    assert.equal(operatorSections([episode(0, "done", "success", null)]).labels, undefined, "no section when nobody was asked");
    assert.equal(operatorSections([episode(0, "done", "success", null), episode(1, "done", "failure", { judgedBy: "human", progress: null, note: null, waitedS: 1 })]).labels?.judged_by, "mixed");
  });
});

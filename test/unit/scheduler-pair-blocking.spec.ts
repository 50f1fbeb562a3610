/**
 * Blocking by cell: a paired compare's pair runs on one cell (issue 25 item 4). The pure rule over a
 * run's pending episodes, and the matching's respect of the cell it names.
 */
import assert from "node:assert/strict";
import { planAssignments, type AvailableCell } from "../../coordinator/scheduler/assignment-plan.js";
import { blockPairsByCell } from "../../coordinator/scheduler/pair-blocking.js";

const ep = (idx: number, pair?: number, block = true) => ({ id: `e${idx}`, idx, assign: pair === undefined ? {} : { pair, order: idx % 2, ...(block ? { block: "cell" as const } : {}) } });
const cell = (cellId: string): AvailableCell => ({ cellId, model: "so101", firmware: "3.11", environment: "tabletop@1" });
const pin = { model: "so101", firmware: "3.11", environment: "tabletop@1" };

describe("scheduler: a paired compare's pair stays on one cell", () => {
  it("offers one episode of a pair whose episodes are both pending; the other waits", () => {
    const { offered, cellOf } = blockPairsByCell([ep(0, 0), ep(1, 0), ep(2, 1), ep(3, 1)], new Map(), new Set(["a", "b"]));
    assert.deepEqual(offered.map((e) => e.id), ["e0", "e2"]);
    assert.equal(cellOf.size, 0);
  });

  it("sends the second episode to the cell that took the first", () => {
    const { offered, cellOf } = blockPairsByCell([ep(1, 0), ep(3, 1), ep(4, 2), ep(5, 2)], new Map([[0, "b"], [1, "a"]]), new Set(["a", "b"]));
    assert.deepEqual(offered.map((e) => e.id), ["e1", "e3", "e4"]);
    assert.deepEqual([...cellOf], [["e1", "b"], ["e3", "a"]]);
  });

  it("lets the second episode go to any cell once the first one's cell is gone (the pair is split)", () => {
    const { offered, cellOf } = blockPairsByCell([ep(1, 0)], new Map([[0, "gone"]]), new Set(["a"]));
    assert.deepEqual(offered.map((e) => e.id), ["e1"]);
    assert.equal(cellOf.size, 0);
  });

  it("leaves episodes without block (unpaired compare, other kinds, older runs) alone", () => {
    const { offered, cellOf } = blockPairsByCell([ep(0, 0, false), ep(1, 0, false), ep(2)], new Map([[0, "a"]]), new Set(["a"]));
    assert.deepEqual(offered.map((e) => e.id), ["e0", "e1", "e2"]);
    assert.equal(cellOf.size, 0);
  });

  it("the matching gives an episode that names a cell to that cell only, and the others to the rest", () => {
    const plan = planAssignments(
      [{ id: "r", priority: "standard", created: "", ...pin, pendingEpisodeIds: ["e1", "e2"], episodePins: { e1: { ...pin, cellId: "c" }, e2: pin } }],
      [cell("a"), cell("b"), cell("c")],
    );
    assert.deepEqual(plan.map((p) => [p.episodeId, p.cellId]), [["e1", "c"], ["e2", "a"]]);
    const none = planAssignments(
      [{ id: "r", priority: "standard", created: "", ...pin, pendingEpisodeIds: ["e1"], episodePins: { e1: { ...pin, cellId: "busy" } } }],
      [cell("a")],
    );
    assert.deepEqual(none, []);
  });
});

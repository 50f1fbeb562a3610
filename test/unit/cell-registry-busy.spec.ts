/**
 * The busy-cell re-offer of issue 24 (row 8): a cell stalled mid-episode past its heartbeat, its
 * stream was closed and its episode requeued; when it reconnected, still running that episode, the
 * coordinator counted it idle, offered it work, took its decline as "finished, free again", and
 * offered again until its next heartbeat (4 times).
 */
import assert from "node:assert/strict";
import { CellRegistry, type CellSession } from "../../coordinator/cells/registry.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { Hello } from "../../protocol/gen/cell.js";

const pins = loadFirmwarePins();
const installed = pins.installations[0];

function session(interruptedEpisodeId = ""): CellSession {
  const hello = Hello.fromPartial({ cellId: installed.cell, robotModel: installed.model, firmware: installed.firmware, environment: "tabletop@1", interruptedEpisodeId });
  return { cellId: installed.cell, sessionId: `s-${interruptedEpisodeId}`, hello, connectedAt: new Date(0).toISOString(), send: () => undefined, close: () => undefined };
}
const stateOf = async (registry: CellRegistry) => (await registry.connectedCells())[0].state;

describe("the fleet registry and a cell that reconnects still busy", () => {
  it("counts a cell that reconnects naming an interrupted episode as busy until a heartbeat says otherwise", async () => {
    const registry = new CellRegistry({ pins });
    registry.attach(session("ep_stalled"));
    assert.equal(await stateOf(registry), "busy");
    registry.recordHeartbeat(installed.cell, { sentAtMs: 0, state: "idle", episodeId: "", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] });
    assert.equal(await stateOf(registry), "idle");
  });

  it("keeps a cell busy with another episode busy when it declines an offer", async () => {
    const registry = new CellRegistry({ pins });
    registry.attach(session());
    registry.recordHeartbeat(installed.cell, { sentAtMs: 0, state: "busy", episodeId: "ep_stalled", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] });
    registry.setAssigned(installed.cell, "ep_offered");
    registry.setAssigned(installed.cell, undefined); // the cell declined: "already running episode ep_stalled"
    assert.equal(await stateOf(registry), "busy");
  });

  it("frees a cell that finished the episode it was running", async () => {
    const registry = new CellRegistry({ pins });
    registry.attach(session());
    registry.setAssigned(installed.cell, "ep_1");
    registry.recordHeartbeat(installed.cell, { sentAtMs: 0, state: "busy", episodeId: "ep_1", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] });
    registry.setAssigned(installed.cell, undefined);
    assert.equal(await stateOf(registry), "idle");
  });
});

describe("the fleet registry after the episode a cell reported on ends", () => {
  for (const state of ["awaiting_label", "intervening", "busy"]) {
    it(`names no held episode and no "${state}" once the episode it was ${state} for has ended`, async () => {
      const registry = new CellRegistry({ pins });
      registry.attach(session());
      registry.setAssigned(installed.cell, "ep_1");
      registry.recordHeartbeat(installed.cell, { sentAtMs: 0, state, episodeId: "ep_1", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] });
      registry.setAssigned(installed.cell, undefined);
      const [cell] = await registry.connectedCells();
      assert.equal(cell.state, "idle");
      assert.equal(cell.episodeId, undefined);
    });
  }

  it("keeps a safety state the cell reported when its episode ends", async () => {
    const registry = new CellRegistry({ pins });
    registry.attach(session());
    registry.setAssigned(installed.cell, "ep_1");
    registry.recordHeartbeat(installed.cell, { sentAtMs: 0, state: "held", episodeId: "ep_1", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] });
    registry.setAssigned(installed.cell, undefined);
    assert.equal(await stateOf(registry), "held");
  });
});

/**
 * A cell agent with several coordinators (issue 16): the production entry point (runCell) over a
 * simulated cell, its coordinatorAddresses pointing at CellLink servers (startFleet) that share one
 * store, as coordinator processes will share one database. A first address nothing listens on is
 * skipped; a coordinator that goes away is left for the next one, which gets the outbox's unsent
 * message with its own seq (after the ones the first applied) and then the heartbeats.
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileAgentConfig } from "../../cell-agent/config.js";
import { SceneReadyGate } from "../../cell-agent/devices/scene/scene-ready-gate.js";
import { runCell, type RunningCell } from "../../cell-agent/main.js";
import { enrollCell } from "../../coordinator/fleet/enrollment.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { startFleet, type Fleet } from "../../coordinator/server.js";
import { getCell } from "../../coordinator/store/cells-repo.js";
import { openDatabase, type Db } from "../../coordinator/store/database.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import type { Heartbeat } from "../../protocol/gen/cell.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { freePort } from "../support/free-port.js";
import { Watched } from "../support/watched.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";

const CELL = "so101-b"; // pinned so101@3.11 in firmware-pins/installations.json

/** One coordinator's CellLink side over the shared store, with what it logged and the heartbeats it took. */
interface TestCoordinator {
  fleet: Fleet;
  address: string;
  log: Watched<string>;
  heartbeats: Watched<Heartbeat>;
}

describe("cell agent failover between coordinators on one store (integration)", function () {
  this.timeout(60_000);
  let dir: string;
  let db: Db;
  let token: string;
  let running: TestCoordinator[] = [];
  let cell: RunningCell | undefined;
  let hardware: SimulatedCell;
  const agentLog = new Watched<string>();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-failover-"));
    db = await openDatabase(join(dir, "assay.db"));
    token = await enrollCell(db, { cellId: CELL, model: "so101" });
    agentLog.clear();
  });

  afterEach(async () => {
    await cell?.stop();
    cell = undefined;
    for (const coordinator of running.splice(0)) await coordinator.fleet.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startCoordinator(): Promise<TestCoordinator> {
    const log = new Watched<string>();
    const fleet = await startFleet({
      db, runEvents: new RunEvents(), pins: loadFirmwarePins(), objects: new DiskStore(join(dir, "artifacts")),
      baseUrl: "http://127.0.0.1:8080", streamsUrl: "wss://127.0.0.1:8080/streams", port: 0, heartbeatIntervalMs: 100,
      logger: { info: (line) => log.push(line), warn: (line) => log.push(line), error: (line) => log.push(line) },
    });
    // Watches heartbeats on their way into the registry; the registry still records each one.
    const heartbeats = new Watched<Heartbeat>();
    const recordHeartbeat = fleet.registry.recordHeartbeat.bind(fleet.registry);
    fleet.registry.recordHeartbeat = (cellId, heartbeat) => {
      recordHeartbeat(cellId, heartbeat);
      heartbeats.push(heartbeat);
    };
    const coordinator = { fleet, address: `127.0.0.1:${fleet.port}`, log, heartbeats };
    running.push(coordinator);
    return coordinator;
  }

  async function stopCoordinator(coordinator: TestCoordinator): Promise<void> {
    running = running.filter((c) => c !== coordinator);
    await coordinator.fleet.stop();
  }

  async function startCell(coordinatorAddresses: string[]): Promise<RunningCell> {
    hardware = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 3, speed: 1, devices: "in-process", engine: "kinematic" });
    const config = compileAgentConfig({
      cellId: CELL, cellToken: token, robotModel: "so101", environment: "tabletop@1", dataDir: join(dir, "agent"), metricsPort: 0,
      coordinatorAddresses, reconnect: { initialMs: 20, maxMs: 200, jitter: 0.5 },
    });
    cell = await runCell(config, { log: (line) => agentLog.push(line), buildHardware: async () => ({ hardware, sceneGate: new SceneReadyGate() }) });
    return cell;
  }

  const logged = (log: Watched<string>, pattern: RegExp, times = 1) => log.until((lines) => lines.filter((l) => pattern.test(l)).length >= times);
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const status = async (running: RunningCell) => (await (await fetch(`http://127.0.0.1:${running.metricsPort}/status`)).json()) as { coordinator: string | null };

  it("skips a coordinator address nothing listens on and connects to the next one", async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const b = await startCoordinator();
    const running = await startCell([dead, b.address]);

    await logged(agentLog, new RegExp(`^connected to coordinator ${escaped(b.address)}`));
    const lines = agentLog.items.join("\n");
    assert.match(lines, new RegExp(`^could not connect to coordinator ${escaped(dead)}: .*; trying ${escaped(b.address)} now$`, "m"));
    assert.match(lines, new RegExp(`^connected to coordinator ${escaped(b.address)} \\(2 of 2 in coordinatorAddresses\\)$`, "m"));
    await b.heartbeats.until((h) => h.length > 0);
    assert.deepEqual((await b.fleet.fleet.connectedCells()).map((c) => [c.cellId, c.state]), [[CELL, "idle"]]);

    assert.equal((await status(running)).coordinator, b.address);
    const metrics = await (await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`)).text();
    assert.match(metrics, new RegExp(`assay_agent_coordinator_connected\\{[^}]*address="${escaped(b.address)}"[^}]*\\} 1`));
    assert.match(metrics, new RegExp(`assay_agent_coordinator_connected\\{[^}]*address="${escaped(dead)}"[^}]*\\} 0`));
  });

  it("leaves a coordinator that goes away for the next one, which gets the unsent outbox with its seq and the heartbeats", async () => {
    const a = await startCoordinator();
    const b = await startCoordinator();
    const running = await startCell([a.address, b.address]);
    await logged(agentLog, new RegExp(`^connected to coordinator ${escaped(a.address)} \\(1 of 2`));

    // On A: an e-stop and its reset, seqs 1 and 2, applied to the shared store.
    hardware.estop.press();
    await logged(a.log, /safety event estop_triggered/);
    hardware.estop.release();
    running.agent.resetEstop();
    await logged(a.log, /safety event estop_reset/);
    assert.equal((await getCell(db, CELL))?.last_seq_applied, 2);

    // A goes away. The agent's next Hello waits (readFirmware is held) so that the e-stop pressed
    // meanwhile can only go to the outbox: no coordinator has welcomed the cell.
    let letHelloGo = () => {};
    const helloHeld = new Promise<void>((resolve) => (letHelloGo = resolve));
    const helloAsked = new Watched<true>();
    const readFirmware = hardware.motors.readFirmware.bind(hardware.motors);
    hardware.motors.readFirmware = async () => {
      helloAsked.push(true);
      await helloHeld;
      return readFirmware();
    };
    await stopCoordinator(a);
    await logged(agentLog, new RegExp(`^left coordinator ${escaped(a.address)}: .*shutting down.*; trying ${escaped(b.address)} in \\d+ ms$`));
    await helloAsked.until((asked) => asked.length > 0);
    assert.equal((await status(running)).coordinator, null, "connected to no coordinator while the Hello waits");
    hardware.estop.press();
    await logged(agentLog, /^E-STOP: torque off/, 2);
    assert.equal((await getCell(db, CELL))?.last_seq_applied, 2, "the second e-stop is only in the outbox");

    letHelloGo();
    await logged(agentLog, new RegExp(`^connected to coordinator ${escaped(b.address)} \\(2 of 2`));
    await logged(b.log, /safety event estop_triggered/);
    assert.equal((await getCell(db, CELL))?.last_seq_applied, 3, "B applied the replayed e-stop as seq 3, after the two A applied");
    await b.heartbeats.until((h) => h.some((heartbeat) => heartbeat.state === "estopped"));
    assert.deepEqual((await b.fleet.fleet.connectedCells()).map((c) => [c.cellId, c.state]), [[CELL, "estopped"]]);
    assert.equal((await status(running)).coordinator, b.address);
  });
});

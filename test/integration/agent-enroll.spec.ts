/**
 * Enrollment over the API and the doctor against a real coordinator: a cell enrolled with POST
 * /v1/cells connects (the production entry point over a simulated cell) and the doctor passes its
 * link checks, with the servos and firmware read from the servo emulator through SerialPortMock;
 * after DELETE /v1/cells/{id} the open stream is cut, and the doctor fails with the plain sentence.
 */
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileAgentConfig } from "../../cell-agent/config.js";
import type { Calibration } from "../../cell-agent/devices/servo/calibration.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { formatReport, type CheckResult } from "../../cell-agent/doctor/check-result.js";
import { runDoctor } from "../../cell-agent/doctor/doctor.js";
import { realProbes, type DoctorProbes } from "../../cell-agent/doctor/probes.js";
import { runCell, type RunningCell } from "../../cell-agent/main.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { SceneReadyGate } from "../../cell-agent/devices/scene/scene-ready-gate.js";
import { createMockServoPort } from "../../simulators/servo-bus/mock-port.js";
import { createSimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { eventually } from "../support/eventually.js";
import { Watched } from "../support/watched.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { testStoreOptions } from "../support/test-database.js";

type Json = Record<string, any>;
const CELL = "so101-b"; // pinned so101@3.11 in firmware-pins/installations.json
const JOINTS = loadFirmwarePins().models.find((m) => m.id === "so101")!.joints;

function calibration(): Calibration {
  return {
    calibratedAt: new Date("2026-11-20T00:00:00Z"),
    joints: Object.fromEntries(JOINTS.map((name, i) => [name, { id: i + 1, model: "sts3215" as const, homingOffsetTicks: 2048, rangeMinTicks: 600, rangeMaxTicks: 3500, driveMode: 0 as const }])),
  };
}

describe("cell enrollment and the doctor against a real coordinator (integration)", function () {
  this.timeout(60_000);
  let dir: string;
  /** Cells are enrolled by the operator account's admin key (docs/api.md, Cells). */
  let operatorKey: string;
  let coordinator: RunningCoordinator;
  let cell: RunningCell | undefined;
  /** The agent's log lines. */
  const agentLog = new Watched<string>();

  const api = async (path: string, init: { method?: string; json?: unknown; key?: string } = {}): Promise<{ status: number; body: Json }> => {
    const res = await fetch(new URL(path, coordinator.baseUrl), {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${init.key ?? operatorKey}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  const waitFor = (what: string, predicate: () => Promise<boolean>) => eventually(what, predicate, { deadlineMs: 15_000 });
  const listed = async () => (await api("/v1/cells")).body.data.find((c: Json) => c.id === CELL) as Json;

  /** Real probes for the link, clock and disk; the servo bus is the emulator on a SerialPortMock. */
  async function doctorFor(token: string): Promise<CheckResult[]> {
    const configPath = join(dir, `doctor-${token.slice(-6)}.json`);
    writeFileSync(configPath, JSON.stringify({
      cellId: CELL, cellToken: token, robotModel: "so101", environment: "tabletop@1", dataDir: join(dir, "doctor-data"),
      coordinatorAddress: coordinator.grpcAddress, metricsPort: 0,
      motors: { kind: "feetech", path: "/dev/assay-emulated-bus", calibration: join(dir, "calibration.json") },
      estop: { kind: "gpio", chip: "gpiochip0", line: 17 },
    }));
    const mock = await createMockServoPort({ nowMs: () => performance.now(), firmware: "3.11", servos: JOINTS.map((_, i) => ({ id: i + 1, model: "sts3215" as const })) });
    const probes: DoctorProbes = {
      ...realProbes(),
      openSerial: async () => undefined,
      openMotors: () => SerialServoBus.open({ jointNames: JOINTS, calibration: calibration(), port: mock.port }),
      readEstop: async () => false,
    };
    try {
      return await runDoctor({ configPath, probes });
    } finally {
      await mock.close();
    }
  }
  const verdictOf = (results: CheckResult[], name: string) => results.find((r) => r.name === name)?.verdict;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-enroll-"));
    writeFileSync(join(dir, "calibration.json"), JSON.stringify({ ...calibration(), calibratedAt: "2026-11-20T00:00:00Z" }));
    coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir: join(dir, "coordinator"), apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(join(dir, "coordinator"))) }));
    operatorKey = (await createApiKey(coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin"], new Date())).secret;
  });

  after(async () => {
    await cell?.stop();
    await coordinator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("enrolls a cell, shows the token once, and lists the fleet without tokens", async () => {
    const bad = await api("/v1/cells", { method: "POST", json: { cell_id: "So 101", model: "so101" } });
    assert.equal(bad.status, 422);
    assert.match(bad.body.error.message, /cell_id must be/);
    const unknownModel = await api("/v1/cells", { method: "POST", json: { cell_id: CELL, model: "so100" } });
    assert.match(unknownModel.body.error.message, /model must be a robot model of the catalog/);

    const created = await api("/v1/cells", { method: "POST", json: { cell_id: CELL, model: "so101" } });
    assert.equal(created.status, 201);
    assert.equal(created.body.object, "cell");
    assert.equal(created.body.id, CELL);
    assert.match(created.body.enrollment_token, /^assay_cell_/);
    assert.ok(created.body.created);

    const list = await api("/v1/cells");
    assert.equal(list.status, 200);
    assert.ok(!JSON.stringify(list.body).includes(created.body.enrollment_token), "GET /v1/cells must never show a token");
    assert.equal((await listed()).connected, false);

    // A customer account's admin key may not change the fleet, the quick start's own (acct_default) included.
    await ensureAccount(coordinator.db, "acct_customer", "Customer", new Date().toISOString());
    const { secret } = await createApiKey(coordinator.db, "acct_customer", ["keys:admin"], new Date());
    for (const key of [secret, TEST_ADMIN_KEY]) {
      const refused = await api("/v1/cells", { method: "POST", json: { cell_id: "so101-z", model: "so101" }, key });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, "insufficient_scope");
    }

    tokenHolder.token = created.body.enrollment_token;
  });

  const tokenHolder = { token: "" };

  it("connects through the production entry point and the doctor passes the link, servo and firmware checks", async () => {
    const config = compileAgentConfig({
      cellId: CELL, cellToken: tokenHolder.token, robotModel: "so101", environment: "tabletop@1", dataDir: join(dir, "agent"),
      coordinatorAddress: coordinator.grpcAddress, metricsPort: 0,
    });
    cell = await runCell(config, {
      log: (line) => agentLog.push(line),
      buildHardware: async () => ({
        hardware: await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 3, speed: 1, devices: "in-process" }),
        sceneGate: new SceneReadyGate(),
      }),
    });
    await waitFor("the cell to show as connected", async () => (await listed())?.connected === true);
    const status = (await (await fetch(`http://127.0.0.1:${cell.metricsPort}/status`)).json()) as Json;
    assert.equal(status.cell, CELL);
    assert.match(await (await fetch(`http://127.0.0.1:${cell.metricsPort}/metrics`)).text(), /assay_agent_upload_backlog/);

    const results = await doctorFor(tokenHolder.token);
    const report = formatReport(results);
    for (const name of ["config file", "servos", "firmware", "coordinator reachable", "coordinator token", "hello/welcome", "clock offset"]) {
      assert.equal(verdictOf(results, name), "PASS", `${name}:\n${report}`);
    }
    // The doctor's own session displaced the agent's; the agent comes back by itself.
    await waitFor("the agent to reconnect after the doctor", async () => (await listed())?.connected === true && (await listed()).state === "idle");
  });

  it("revokes the cell: its open stream is cut, it stays out, and the doctor says why in words", async () => {
    const revoked = await api(`/v1/cells/${CELL}`, { method: "DELETE" });
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revoked);
    assert.equal(revoked.body.connected, false);
    // The agent dials again after the cut; wait until the coordinator has refused it, then look.
    const refusals = agentLog.items.filter((l) => l.includes("refused this cell's token")).length;
    await agentLog.until((all) => all.filter((l) => l.includes("refused this cell's token")).length > refusals);
    const after = await listed();
    assert.equal(after.connected, false, "a revoked cell must not get back in");
    assert.equal(after.state, "revoked");

    const results = await doctorFor(tokenHolder.token);
    const token = results.find((r) => r.name === "coordinator token")!;
    assert.equal(token.verdict, "FAIL", formatReport(results));
    assert.equal(token.sentence, "The coordinator does not know this cell or its token was revoked; ask for a new enrollment token.");
    assert.equal((await api("/v1/cells/so101-nope", { method: "DELETE" })).status, 404);
  });
});

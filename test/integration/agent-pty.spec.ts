/**
 * An unmodified agent process against emulated servos through a real device path: the production
 * entry (`node --import tsx cell-agent/cli.ts doctor --config <file>`) opens the slave end of a node-pty
 * pseudo-terminal pair (simulators/servo-bus/pty-bridge.ts) with serialport, as it would /dev/ttyUSB0,
 * while this process serves the servo emulator on the master end and a coordinator on port 0.
 *
 * The doctor's servo bus, servos and firmware checks pass, and so do its link checks against the
 * coordinator (the cell enrolled with a real token). The e-stop check fails: a pty has no modem
 * lines (TIOCMGET/TIOCMSET give ENOTTY), so no e-stop can be emulated on one, and the config has none;
 * for the same reason `cell-agent run`, which refuses to start without an e-stop input, is not run here.
 */
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CheckResult } from "../../cell-agent/doctor/check-result.js";
import { formatReport } from "../../cell-agent/doctor/check-result.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { startPtyBridge, type PtyBridge } from "../../simulators/servo-bus/pty-bridge.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { testStoreOptions } from "../support/test-database.js";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CELL = "so101-b"; // pinned so101@3.11 in firmware-pins/installations.json
const JOINTS = loadFirmwarePins().models.find((m) => m.id === "so101")!.joints;

interface DoctorRun {
  code: number | null;
  results: CheckResult[];
  stdout: string;
  stderr: string;
}

/** Runs the doctor as its own process. Never spawnSync: this process's event loop serves the servos. */
async function runDoctorProcess(configPath: string): Promise<DoctorRun> {
  const nodeArgs = await nodeArgsFor(join(REPO, "cell-agent", "cli.ts"), ["doctor", "--config", configPath, "--json"]);
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, nodeArgs, {
      cwd: REPO,
      env: { ...process.env, ASSAY_CELL_AGENT_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const start = stdout.indexOf("[");
      let results: CheckResult[];
      try {
        results = JSON.parse(stdout.slice(start)) as CheckResult[];
      } catch (error) {
        return reject(new Error(`the doctor printed no JSON report (exit ${code}): ${(error as Error).message}\nstdout: ${stdout}\nstderr: ${stderr}`));
      }
      resolveRun({ code, results, stdout, stderr });
    });
  });
}

describe("an unmodified agent process on emulated servos through a pty (integration)", function () {
  this.timeout(90_000);
  let dir: string;
  let coordinator: RunningCoordinator;
  let token: string;
  let bridge: PtyBridge | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-agent-pty-"));
    writeFileSync(join(dir, "calibration.json"), JSON.stringify({
      calibratedAt: "2026-11-20T00:00:00Z",
      joints: Object.fromEntries(JOINTS.map((name, i) => [name, { id: i + 1, model: "sts3215", homingOffsetTicks: 2048, rangeMinTicks: 600, rangeMaxTicks: 3500, driveMode: 0 }])),
    }));
    coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir: join(dir, "coordinator"), apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(join(dir, "coordinator"))) }));
    token = await coordinator.enrollCell(CELL, "so101");
  });

  afterEach(async () => {
    await bridge?.close();
    bridge = undefined;
  });

  after(async () => {
    await coordinator?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The agent's config file, as an installer writes it, with the pty as the servo bus. */
  function writeConfig(name: string, agentPath: string): string {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify({
      cellId: CELL, cellToken: token, robotModel: "so101", environment: "tabletop@1", dataDir: join(dir, "agent-data"),
      coordinatorAddress: coordinator.grpcAddress,
      // A port nothing listens on, so the doctor does not take a running agent's word for the devices.
      metricsPort: 1,
      // Generous: on a busy 2-core test machine this process (emulator + coordinator) may answer late.
      motors: { kind: "feetech", path: agentPath, calibration: join(dir, "calibration.json"), transactionTimeoutMs: 100 },
    }, null, 2));
    return path;
  }

  const lineOf = (run: DoctorRun, name: string) => {
    const found = run.results.find((r) => r.name === name);
    assert.ok(found, `no "${name}" line in the report:\n${formatReport(run.results)}\nstderr: ${run.stderr}`);
    return found;
  };

  it("doctor: the servo bus device, the servos and the firmware pass through the pty, and the coordinator link passes", async () => {
    bridge = await startPtyBridge({ firmware: "3.11", servos: JOINTS.map((_, i) => ({ id: i + 1, model: "sts3215" as const })) });
    const run = await runDoctorProcess(writeConfig("doctor", bridge.agentPath));
    const report = `${formatReport(run.results)}\nstderr: ${run.stderr}`;
    for (const name of ["config file", "servo bus device", "servos", "firmware"]) {
      assert.equal(lineOf(run, name).verdict, "PASS", `${name}:\n${report}`);
    }
    assert.match(lineOf(run, "servo bus device").sentence, new RegExp(`${bridge.agentPath} exists and can be opened`));
    assert.match(lineOf(run, "firmware").sentence, /reports firmware 3\.11, the version pinned for cell so101-b/);
    // Real bytes crossed: every servo was pinged and the firmware registers read over the pty.
    assert.ok(bridge.emulator.stats.requests >= JOINTS.length + 1, `the emulator saw ${bridge.emulator.stats.requests} requests\n${report}`);
    assert.equal(bridge.emulator.stats.badRequests, 0, report);
    // The link: the enrolled token is accepted and the doctor's Hello (with the firmware it read) is welcomed.
    for (const name of ["coordinator reachable", "coordinator token", "hello/welcome"]) {
      assert.equal(lineOf(run, name).verdict, "PASS", `${name}:\n${report}`);
    }
    // What a pty cannot give: no e-stop is configured (a pty has no modem lines to wire one to).
    assert.equal(lineOf(run, "e-stop").verdict, "FAIL", report);
    assert.equal(run.code, 1, report);
  });

  it("doctor: firmware that differs from the pin fails the firmware check, read over the same pty", async () => {
    bridge = await startPtyBridge({ firmware: "3.10", servos: JOINTS.map((_, i) => ({ id: i + 1, model: "sts3215" as const })) });
    const run = await runDoctorProcess(writeConfig("doctor-old-firmware", bridge.agentPath));
    const report = `${formatReport(run.results)}\nstderr: ${run.stderr}`;
    assert.equal(lineOf(run, "servos").verdict, "PASS", report);
    const firmware = lineOf(run, "firmware");
    assert.equal(firmware.verdict, "FAIL", report);
    assert.match(firmware.sentence, /reports firmware 3\.10 but 3\.11 is pinned for cell so101-b/);
  });

  it("doctor: a servo missing from the bus fails the servos check, naming its id", async () => {
    // Servo 6 (gripper) is not on the bus.
    bridge = await startPtyBridge({ firmware: "3.11", servos: JOINTS.slice(0, 5).map((_, i) => ({ id: i + 1, model: "sts3215" as const })) });
    const run = await runDoctorProcess(writeConfig("doctor-missing-servo", bridge.agentPath));
    const report = `${formatReport(run.results)}\nstderr: ${run.stderr}`;
    assert.equal(lineOf(run, "servo bus device").verdict, "PASS", report);
    const servos = lineOf(run, "servos");
    assert.equal(servos.verdict, "FAIL", report);
    assert.match(servos.sentence, /ping id 6: .*no valid reply/, report);
    assert.equal(run.results.find((r) => r.name === "firmware"), undefined, report);
  });
});

/**
 * `cell-agent calibration import-lerobot <file.json>` as its own process, and the LeRobot frame the
 * agent builds from the imported file and the cell's servo calibration.
 */
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCliArgs } from "../../cell-agent/cli.js";
import { goalTicksFromRad } from "../../cell-agent/devices/servo/calibration.js";
import { controlTable } from "../../cell-agent/devices/servo/control-tables.js";
import { importLerobotCalibration, lerobotCalibrationPath, lerobotFrameSource } from "../../cell-agent/lerobot-import.js";
import { simulatedCalibration } from "../../simulators/servo-bus/world-servo-bridge.js";
import { LEROBOT_FILE } from "../support/lerobot-calibration-file.js";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SO101_JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const nodeArgs = await nodeArgsFor(join(REPO, "cell-agent", "cli.ts"), args);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, nodeArgs, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", fail);
    child.once("exit", (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

function cellDir(robotModel = "so101"): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), "lerobot-import-"));
  const config = join(dir, "cell-agent.json");
  writeFileSync(config, JSON.stringify({ cellId: "so101-e", cellToken: "t", robotModel, environment: "tabletop@1", dataDir: join(dir, "data") }));
  return { dir, config };
}

describe("cell-agent calibration import-lerobot", function () {
  this.timeout(60_000);

  it("parses the command and its file", () => {
    assert.deepEqual(parseCliArgs(["calibration", "import-lerobot", "/c/f.json", "--config", "/x.json"]), { command: "import-lerobot", configPath: "/x.json", json: false, file: "/c/f.json" });
    assert.throws(() => parseCliArgs(["calibration", "import-lerobot"]), /needs the LeRobot calibration file/);
    assert.throws(() => parseCliArgs(["calibration", "export"]), /unknown calibration command "export"/);
  });

  it("imports a good file into the dataDir and lists the motors", async () => {
    const { dir, config } = cellDir();
    const file = join(dir, "my_follower.json");
    writeFileSync(file, JSON.stringify(LEROBOT_FILE, null, 4));
    const result = await runCli(["calibration", "import-lerobot", file, "--config", config]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported the LeRobot calibration .*my_follower\.json to .*lerobot-so101-follower\.json/);
    assert.match(result.stdout, /shoulder_pan\s+id 1\s+range 758\.\.3292\s+homing_offset -1470/);
    assert.deepEqual(JSON.parse(readFileSync(lerobotCalibrationPath(join(dir, "data")), "utf8")), LEROBOT_FILE);
  });

  it("refuses a bad file in plain words naming the field, and keeps nothing", async () => {
    const { dir, config } = cellDir();
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ ...LEROBOT_FILE, wrist_flex: { ...LEROBOT_FILE.wrist_flex, range_max: 5000 } }));
    const result = await runCli(["calibration", "import-lerobot", file, "--config", config]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /cannot import the LeRobot calibration: LeRobot calibration .*bad\.json: wrist_flex\.range_max must be 0\.\.4095 \(STS3215 positions\); got 5000/);
    assert.equal(existsSync(lerobotCalibrationPath(join(dir, "data"))), false);
  });

  it("refuses on a cell that is not an SO-101", async () => {
    const { dir, config } = cellDir("fr3");
    const file = join(dir, "f.json");
    writeFileSync(file, JSON.stringify(LEROBOT_FILE));
    const result = await runCli(["calibration", "import-lerobot", file, "--config", config]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /for an SO-101 follower; this cell's robotModel is "fr3"/);
  });
});

describe("the agent's LeRobot frame", () => {
  const servo = simulatedCalibration(SO101_JOINTS, "sts3215");
  const source = (dataDir: string) => lerobotFrameSource({ dataDir, robotModel: "so101", jointNames: SO101_JOINTS, servoCalibration: () => servo });

  it("says how to import when the cell has no LeRobot calibration", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lerobot-frame-"));
    await assert.rejects(source(dir)(true), /no LeRobot calibration imported; run "cell-agent calibration import-lerobot <file\.json>"/);
  });

  it("refuses when the servos' Homing_Offset registers are not the file's (another arm, or recalibrated)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lerobot-frame-"));
    const file = join(dir, "f.json");
    writeFileSync(file, JSON.stringify(LEROBOT_FILE));
    importLerobotCalibration(file, dir);
    const offsets = Object.values(LEROBOT_FILE).map((m) => m.homing_offset);
    const withOffsets = (read: number[]) => lerobotFrameSource({ dataDir: dir, robotModel: "so101", jointNames: SO101_JOINTS, servoCalibration: () => servo, readHomingOffsetTicks: async () => read });
    await withOffsets(offsets)(true);
    await assert.rejects(withOffsets([0, ...offsets.slice(1)])(true), /Homing_Offset registers do not match the imported LeRobot calibration \(shoulder_pan reads 0, the file says -1470\)/);
  });

  it("leaves the cell's own range clamp in force after the conversion", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lerobot-frame-"));
    const file = join(dir, "f.json");
    writeFileSync(file, JSON.stringify(LEROBOT_FILE));
    importLerobotCalibration(file, dir);
    const narrow = simulatedCalibration(SO101_JOINTS, "sts3215");
    narrow.joints.shoulder_pan = { ...narrow.joints.shoulder_pan, rangeMinTicks: 1000, rangeMaxTicks: 3000 };
    const frame = await lerobotFrameSource({ dataDir: dir, robotModel: "so101", jointNames: SO101_JOINTS, servoCalibration: () => narrow })(true);
    // 170 degrees on shoulder_pan: LeRobot writes int(170 * 4095 / 360 + 2025) = int(3958.75) = 3958; the cell's range ends at 3000.
    const [panRad] = frame.actionToRad([170, 0, 0, 0, 0, 50]);
    assert.equal(goalTicksFromRad(narrow.joints.shoulder_pan, controlTable("sts3215"), panRad), 3000);
  });

  it("turns LeRobot actions into the goal ticks LeRobot would write, and ticks into LeRobot's state", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lerobot-frame-"));
    const file = join(dir, "f.json");
    writeFileSync(file, JSON.stringify(LEROBOT_FILE));
    importLerobotCalibration(file, dir);
    const table = controlTable("sts3215");
    const frame = await source(dir)(true);
    // lerobot-units known answers: 90 degrees -> [3048, 3023, 3024, 3043, 3071], gripper 25 -> 2350.
    const rad = frame.actionToRad([90, 90, 90, 90, 90, 25]);
    const ticks = rad.map((r, i) => goalTicksFromRad(servo.joints[SO101_JOINTS[i]], table, r));
    assert.deepEqual(ticks, [3048, 3023, 3024, 3043, 3071, 2350]);
    // And back: those ticks read as LeRobot normalizes them, (t - mid) * 360 / 4095; elbow and wrist_roll
    // have half-tick mids (2000.5, 2047.5), so 1023.5 ticks = 89.978... there.
    const state = frame.stateFromRad(rad);
    assert.deepEqual(state.map((v) => Number(v.toFixed(9))), [89.934065934, 89.934065934, 89.978021978, 89.934065934, 89.978021978, 25]);
  });
});

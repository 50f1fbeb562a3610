/**
 * `cell-agent calibration camera`: checkerboard corners and Zhang's calibration on rendered views of a
 * board seen by a known camera with OpenCV's plumb_bob distortion (test/support/checkerboard-render.ts),
 * and the command on a folder of JPEGs writing a block the agent's config compiler accepts.
 */
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import jpeg from "jpeg-js";
import { calibrateCamera, type CalibrationView } from "../../cell-agent/calibration/calibrate-camera.js";
import { findCheckerboard } from "../../cell-agent/calibration/find-checkerboard.js";
import type { Intrinsics } from "../../cell-agent/calibration/pinhole-model.js";
import { parseCliArgs } from "../../cell-agent/cli.js";
import { compileAgentConfig } from "../../cell-agent/config.js";
import { boardPoses, mulberry32, renderBoard, trueCorners } from "../support/checkerboard-render.js";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const WIDTH = 640, HEIGHT = 480;
const BOARD = { cols: 9, rows: 6, squareMm: 24 };
const CAMERA: Intrinsics = { fx: 600, fy: 606, cx: 322.5, cy: 238.7, distortion: [-0.15, 0.08, 0.001, -0.0008, -0.01] };
const PINHOLE: Intrinsics = { ...CAMERA, distortion: [0, 0, 0, 0, 0] };

function objectPoints(): [number, number][] {
  const points: [number, number][] = [];
  for (let j = 0; j < BOARD.rows; j++) for (let i = 0; i < BOARD.cols; i++) points.push([i * BOARD.squareMm, j * BOARD.squareMm]);
  return points;
}

function toJpeg(gray: Float32Array): Uint8Array {
  const rgba = new Uint8Array(WIDTH * HEIGHT * 4);
  for (let i = 0; i < gray.length; i++) {
    const v = Math.max(0, Math.min(255, Math.round(gray[i]!)));
    rgba.set([v, v, v, 255], 4 * i);
  }
  return jpeg.encode({ data: rgba, width: WIDTH, height: HEIGHT }, 95).data;
}

async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const nodeArgs = await nodeArgsFor(join(REPO, "cell-agent", "cli.ts"), args);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, nodeArgs, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", fail);
    child.once("exit", (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

describe("camera calibration (checkerboard, Zhang, OpenCV's model)", function () {
  this.timeout(180_000);
  const poses = boardPoses(BOARD, CAMERA, WIDTH, HEIGHT, 16, 7);
  let rendered: Float32Array[] = [];

  before(() => {
    assert.equal(poses.length, 16);
    rendered = poses.map((pose, v) => renderBoard(BOARD, pose, CAMERA, WIDTH, HEIGHT, { samples: 4, noise: 2, seed: 100 + v }));
  });

  it("finds every inner corner of clean views within 0.2 px, in OpenCV's order", () => {
    for (const [v, pose] of boardPoses(BOARD, PINHOLE, WIDTH, HEIGHT, 4, 11).entries()) {
      const image = renderBoard(BOARD, pose, PINHOLE, WIDTH, HEIGHT, { samples: 10, seed: v });
      const found = findCheckerboard({ width: WIDTH, height: HEIGHT, data: image }, BOARD);
      const truth = trueCorners(BOARD, pose, PINHOLE);
      assert.equal(found.length, 54);
      // The order may be the board's or the board turned half a turn (a 9x6 board looks the same both ways).
      const error = (order: (k: number) => number) => Math.max(...found.map((c, k) => Math.hypot(c[0] - truth[order(k)]![0], c[1] - truth[order(k)]![1])));
      const worst = Math.min(error((k) => k), error((k) => 53 - k));
      assert.ok(worst < 0.2, `view ${v}: worst corner ${worst.toFixed(3)} px off`);
    }
  });

  it("refuses a frame where part of the board is hidden, saying why", () => {
    const image = new Float32Array(rendered[0]!);
    const corners = trueCorners(BOARD, poses[0]!, CAMERA);
    const [hx, hy] = corners[BOARD.cols * 2 + 4]!; // a grey patch over the board's middle
    for (let y = Math.round(hy) - 30; y < hy + 30; y++) for (let x = Math.round(hx) - 30; x < hx + 30; x++) image[y * WIDTH + x] = 120;
    assert.throws(() => findCheckerboard({ width: WIDTH, height: HEIGHT, data: image }, BOARD), /not the board's 9x6 inner corners|no checkerboard lattice|fewer than the board's/);
    assert.throws(() => findCheckerboard({ width: WIDTH, height: HEIGHT, data: new Float32Array(WIDTH * HEIGHT).fill(128) }, BOARD), /no checkerboard corners in view/);
  });

  it("recovers fx, fy within 0.5 %, cx, cy within 2 px and k1 within 0.02 from 16 noisy views, RMS under 0.3 px", () => {
    const views: CalibrationView[] = rendered.map((data, v) => ({ label: `view ${v}`, objectPoints: objectPoints(), imagePoints: findCheckerboard({ width: WIDTH, height: HEIGHT, data }, BOARD) }));
    const result = calibrateCamera(views, WIDTH, HEIGHT);
    const k = result.intrinsics;
    assert.ok(Math.abs(k.fx / CAMERA.fx - 1) < 0.005, `fx ${k.fx}`);
    assert.ok(Math.abs(k.fy / CAMERA.fy - 1) < 0.005, `fy ${k.fy}`);
    assert.ok(Math.abs(k.cx - CAMERA.cx) < 2, `cx ${k.cx}`);
    assert.ok(Math.abs(k.cy - CAMERA.cy) < 2, `cy ${k.cy}`);
    assert.ok(Math.abs(k.distortion[0] - CAMERA.distortion[0]) < 0.02, `k1 ${k.distortion[0]}`);
    assert.ok(result.rmsPx < 0.3, `RMS ${result.rmsPx}`);
    assert.equal(result.perView.length, 16);
    for (const view of result.perView) assert.ok(view.rmsPx < 0.5, `${view.label}: ${view.rmsPx}`);
  });

  it("refuses fewer than 5 views and views that are all parallel, saying what to do", () => {
    const random = mulberry32(5);
    const exact = (pose: (typeof poses)[number]) => trueCorners(BOARD, pose, CAMERA).map(([u, v]) => [u + (random() - 0.5) * 0.1, v + (random() - 0.5) * 0.1] as [number, number]);
    const few = poses.slice(0, 4).map((pose, v) => ({ label: `view ${v}`, objectPoints: objectPoints(), imagePoints: exact(pose) }));
    assert.throws(() => calibrateCamera(few, WIDTH, HEIGHT), /at least 5 views with the whole board found; got 4/);
    const parallel = [0, 1, 2, 3, 4, 5].map((v) => ({ rvec: [0.3, 0.1, 0.05] as [number, number, number], t: [-100 + 8 * v, -60 + 5 * v, 420 + 15 * v] as [number, number, number] }));
    const flat = parallel.map((pose, v) => ({ label: `view ${v}`, objectPoints: objectPoints(), imagePoints: exact(pose) }));
    assert.throws(() => calibrateCamera(flat, WIDTH, HEIGHT), /nearly parallel planes .*tilt the board more/);
  });

  it("the command calibrates a folder of JPEGs and writes a block the agent's config compiler accepts", async () => {
    assert.deepEqual(parseCliArgs(["calibration", "camera", "top", "--board", "9x6", "--square-mm", "24", "--from", "/p", "--write", "--config", "/c.json"]).cameraCalibration,
      { camera: "top", board: { cols: 9, rows: 6 }, squareMm: 24, views: 15, fromDir: "/p", write: true });
    assert.throws(() => parseCliArgs(["calibration", "camera", "top", "--board", "9by6", "--square-mm", "24"]), /--board must be the board's inner corners .*got "9by6"/);
    assert.throws(() => parseCliArgs(["calibration", "camera", "top", "--board", "9x6"]), /needs --square-mm/);
    const dir = mkdtempSync(join(tmpdir(), "camera-calibration-"));
    const photos = join(dir, "photos");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(photos);
    rendered.slice(0, 12).forEach((data, v) => writeFileSync(join(photos, `frame-${String(v).padStart(2, "0")}.jpg`), toJpeg(data)));
    writeFileSync(join(photos, "z-blank.jpg"), toJpeg(new Float32Array(WIDTH * HEIGHT).fill(128)));
    const config = join(dir, "cell-agent.json");
    writeFileSync(config, JSON.stringify({ cellId: "so101-e", cellToken: "t", robotModel: "so101", environment: "tabletop@1", dataDir: join(dir, "data"), cameras: [{ name: "top", device: "/dev/video0" }] }), { mode: 0o600 });
    const result = await runCli(["calibration", "camera", "top", "--board", "9x6", "--square-mm", "24", "--from", photos, "--write", "--config", config]);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, /view 12: frame-11\.jpg: found all 54 corners/);
    assert.match(result.stdout, /skipped z-blank\.jpg: no checkerboard corners in view/);
    assert.match(result.stdout, /RMS reprojection error 0\.\d+ px/);
    const written = JSON.parse(readFileSync(config, "utf8"));
    const compiled = compileAgentConfig(written);
    const calibration = compiled.cameras[0]!.calibration!;
    assert.equal(calibration.model, "pinhole");
    assert.deepEqual([calibration.width, calibration.height], [WIDTH, HEIGHT]);
    assert.ok(Math.abs(calibration.fx! / CAMERA.fx - 1) < 0.01, `fx ${calibration.fx}`);
    assert.equal(calibration.distortion!.length, 5);
    assert.equal(calibration.extrinsics.parent_frame, "uncalibrated");
    const missing = await runCli(["calibration", "camera", "wrist", "--board", "9x6", "--square-mm", "24", "--from", photos, "--config", config]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /has no camera "wrist"; its cameras: top/);
  });
});

/**
 * The rasterizer's WebAssembly polygon fill (simulators/render/polygon-fill-wasm.ts) draws exactly
 * what the JavaScript reference (fillPolygon) draws: the same colour bytes, nearness values and rows
 * drawn, for random scenes through every camera (arm poses, objects, lightings, noise seeds, a cell's
 * variation) and for polygons made to hit the edge cases (edge-on and degenerate faces, faces partly
 * or wholly off-screen, sub-pixel faces, vertices and horizontal edges on pixel centres, depth ties,
 * colours far out of range or NaN, exact halves). The module is assembled in the process: its bytes
 * validate and it is the kernel the renderer uses.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { CameraFrame } from "../../cell-agent/hardware/types.js";
import { mulberry32, type Uniform } from "../../protocol/prng.js";
import { SimCamera } from "../../simulators/devices/sim-camera.js";
import { LIGHTING_PRESETS } from "../../simulators/render/lighting.js";
import { javascriptPolygonFiller, PIXEL_NOISE, type PolygonFiller } from "../../simulators/render/polygon-fill.js";
import { kernelBytes, WASM_POLYGON_CAPACITY, wasmPolygonFiller } from "../../simulators/render/polygon-fill-wasm.js";
import { CameraRenderer, type RenderScene } from "../../simulators/render/rasterizer.js";
import { forwardKinematics, inverseKinematics } from "../../simulators/world/kinematics.js";
import { jointsOf } from "../../simulators/world/embodiments.js";
import { makeObject, type SimObject } from "../../simulators/world/objects.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);
const KINDS = ["cube", "block-blue", "mug", "stapler"];

function randomObjects(rand: Uniform): SimObject[] {
  const count = Math.floor(rand() * 5);
  return Array.from({ length: count }, (_, i) => {
    const kind = KINDS[Math.floor(rand() * KINDS.length)];
    const lifted = rand() < 0.2 ? 0.05 + rand() * 0.1 : 0;
    return makeObject(`${kind}#${i}`, kind, [0.08 + rand() * 0.3, -0.13 + rand() * 0.26, 0.015 + lifted], rand() * 2 * Math.PI);
  });
}

/** An arm reaching a random point over the table (low ones put the wrist camera's near plane into the objects), or a random joint vector. */
function randomArm(rand: Uniform): number[] {
  if (rand() < 0.25) return [rand() * 3 - 1.5, rand() * 2 - 1, rand() * 2 - 1, rand() * 3 - 1.5, rand() * 6 - 3];
  for (;;) {
    const arm = inverseKinematics([0.1 + rand() * 0.28, -0.15 + rand() * 0.3, 0.005 + rand() * 0.15], rand() * 2 * Math.PI - Math.PI);
    if (arm) return arm;
  }
}

function randomScene(rand: Uniform): RenderScene {
  const arm = randomArm(rand);
  const lightings = [...Object.keys(LIGHTING_PRESETS), "no-such-lighting"];
  return {
    objects: randomObjects(rand), tool: forwardKinematics(arm), opening: rand(), arm,
    lighting: lightings[Math.floor(rand() * lightings.length)], noiseSeed: Math.floor(rand() * 2 ** 32),
  };
}

/** Both fillers of one size, fed the same polygons. */
function fillerPair(width: number, height: number, kernel: "simd" | "scalar"): [PolygonFiller, PolygonFiller] {
  const wasm = wasmPolygonFiller(width, height, kernel);
  assert.ok(wasm, "the WebAssembly kernel validates and instantiates on this Node");
  const js = javascriptPolygonFiller(width, height, WASM_POLYGON_CAPACITY);
  for (const { frame } of [wasm, js]) {
    frame.colour.fill(0);
    frame.nearness.fill(-Infinity);
  }
  return [wasm, js];
}

function fillBoth(pair: [PolygonFiller, PolygonFiller], vertices: number[][], colour: [number, number, number], noiseOffset: number): void {
  for (const { poly, fill } of pair) {
    vertices.forEach(([x, y, q, f], i) => {
      poly.xs[i] = x;
      poly.ys[i] = y;
      poly.qs[i] = q;
      poly.fs[i] = f;
    });
    poly.count = vertices.length;
    [poly.red, poly.green, poly.blue] = colour;
    poly.noiseOffset = noiseOffset;
    fill();
  }
}

function assertSameFrames([wasm, js]: [PolygonFiller, PolygonFiller], what: string): void {
  assert.deepEqual(wasm.frame.drawnRows, js.frame.drawnRows, `${what}: rows drawn`);
  assert.ok(Buffer.from(wasm.frame.colour.buffer, wasm.frame.colour.byteOffset, wasm.frame.colour.length).equals(Buffer.from(js.frame.colour)), `${what}: colour bytes`);
  const a = wasm.frame.nearness, b = js.frame.nearness;
  for (let p = 0; p < a.length; p++) {
    if (!Object.is(a[p], b[p]) && !(Number.isNaN(a[p]) && Number.isNaN(b[p]))) assert.fail(`${what}: nearness at pixel ${p}: ${a[p]} (wasm) against ${b[p]} (javascript)`);
  }
}

describe("the rasterizer's WebAssembly polygon fill against the JavaScript reference", () => {
  it("random scenes through the top, wrist, head and side cameras render the same bytes (reused renderers, a cell's variation)", function () {
    this.timeout(60_000);
    const rand = mulberry32(20261129);
    const cells = [{}, { topMountOffsetM: [0.004, -0.003] as const, colourGain: [1.04, 0.97, 1.02] as const }];
    for (const camera of ["top", "wrist", "head", "side"]) {
      for (const cell of cells) {
        const wasm = new CameraRenderer(camera, cell, "wasm");
        const js = new CameraRenderer(camera, cell, "javascript");
        const scenes = camera === "top" || camera === "wrist" ? 12 : 3;
        for (let k = 0; k < scenes; k++) {
          const scene = randomScene(rand);
          assert.equal(sha(wasm.render(scene).rgb), sha(js.render(scene).rgb), `${camera} scene ${k}: ${JSON.stringify({ arm: scene.arm, lighting: scene.lighting, noiseSeed: scene.noiseSeed })}`);
        }
      }
    }
  });

  for (const kernel of ["simd", "scalar"] as const) {
  it(`${kernel} kernel: random polygons, anywhere on and off a frame, at any depth and colour, fill the same pixels, nearness and rows`, () => {
    const rand = mulberry32(7);
    const pair = fillerPair(97, 61, kernel);
    for (let k = 0; k < 3000; k++) {
      const count = Math.floor(rand() * 9);
      const scale = rand() < 0.3 ? 2 : rand() < 0.5 ? 0.05 : 1.3;
      const cx = -20 + rand() * 140, cy = -20 + rand() * 100;
      const vertices = Array.from({ length: count }, () => {
        // Half the vertices on whole or half pixels: edges through pixel centres, horizontal edges on scan lines.
        const snap = (v: number) => (rand() < 0.5 ? Math.round(v * 2) / 2 : v);
        return [snap(cx + (rand() - 0.5) * 97 * scale), snap(cy + (rand() - 0.5) * 61 * scale), Math.round(rand() * 8) / 8, 0.5 + rand()];
      });
      fillBoth(pair, vertices, [rand() * 400 - 50, rand() * 300, rand() * 260], Math.floor(rand() * 2 ** 18));
    }
    assertSameFrames(pair, "random polygons");
  });

  it(`${kernel} kernel: edge cases: edge-on, degenerate, sub-pixel, off-screen, depth ties, out-of-range and NaN colours, exact halves`, () => {
    const pair = fillerPair(64, 48, kernel);
    const quad = (x0: number, y0: number, x1: number, y1: number, q: number, f: number) => [[x0, y0, q, f], [x1, y0, q, f], [x1, y1, q, f], [x0, y1, q, f]];
    const cases: Array<[string, number[][], [number, number, number]]> = [
      ["whole frame", quad(-1, -1, 65, 49, 0, 1), [120, 60, 30]],
      ["edge-on (collinear)", [[0, 0, 1, 1], [32, 24, 1, 1], [64, 48, 1, 1]], [255, 0, 0]],
      ["two vertices", [[0, 0, 1, 1], [40, 40, 1, 1]], [255, 0, 0]],
      ["sub-pixel triangle over a pixel centre", [[10.4, 10.4, 0.5, 1], [10.6, 10.45, 0.5, 1], [10.5, 10.6, 0.5, 1]], [0, 255, 0]],
      ["sub-pixel triangle between centres", [[12.6, 12.6, 0.5, 1], [12.9, 12.6, 0.5, 1], [12.7, 12.9, 0.5, 1]], [0, 255, 0]],
      ["on pixel centres", [[20.5, 20.5, 0.2, 1], [30.5, 20.5, 0.2, 1], [30.5, 30.5, 0.2, 1], [20.5, 30.5, 0.2, 1]], [10, 20, 30]],
      ["left of the frame", quad(-30, 5, -0.6, 40, 2, 1), [1, 2, 3]],
      ["right of and below the frame", quad(64.6, 48.6, 90, 90, 2, 1), [1, 2, 3]],
      ["partly off every side", [[-20, 24, 0.3, 1], [32, -30, 0.4, 1.2], [90, 24, 0.5, 1], [32, 80, 0.6, 0.8]], [200, 150, 100]],
      ["a depth tie: the later face wins", quad(5, 5, 40, 30, 0.3, 1), [0, 0, 255]],
      ["nearness rounding to float32", [[0, 0, 0.30000001, 1], [64, 0, 0.3000001, 1], [64, 48, 0.30000002, 1], [0, 48, 0.3, 1]], [9, 9, 9]],
      ["over 255 and under 0", quad(0, 0, 64, 20, 5, 3), [200, -100, 1e6]],
      ["factor zero: the noise alone, with its +/-3.5 halves", quad(0, 20, 64, 48, 5, 0), [77, 0, 255]],
      ["exact halves of the colour", quad(0, 0, 64, 48, 6, 0.5), [5, 7, 9]],
      ["NaN factor", [[0, 0, 7, NaN], [64, 0, 7, 1], [64, 48, 7, 1]], [100, 100, 100]],
      ["NaN nearness", [[0, 0, NaN, 1], [64, 0, 8, 1], [0, 48, 8, 1]], [100, 100, 100]],
      ["NaN vertex", [[NaN, 0, 9, 1], [64, 0, 9, 1], [64, 48, 9, 1], [0, 48, 9, 1]], [100, 100, 100]],
      ["huge coordinates", [[-1e12, -1e12, 10, 1], [1e12, -1e12, 10, 1], [0, 1e12, 10, 1]], [50, 60, 70]],
      ["a far face behind everything", quad(0, 0, 64, 48, -1e9, 1), [255, 255, 255]],
    ];
    for (const [what, vertices, colour] of cases) {
      fillBoth(pair, vertices, colour, 4321);
      assertSameFrames(pair, what);
    }
    assert.ok(PIXEL_NOISE.includes(3.5) && PIXEL_NOISE.includes(-3.5), "the noise table has the halves the cases rely on");
  });
  }

  it("a camera's overlapping captures each keep their own picture: its buffer, drawn in place, is not drawn over while its JPEG is encoded", async () => {
    const world = new SimWorld({ model: "so101", seed: 5, engine: "kinematic" });
    world.resetScene({ objects: { cube: { object: "cube", positionM: [0.23, -0.03, 0.015], yawRad: 0.35 } }, lighting: "warm", distractors: [], homeRad: new Array(6).fill(0) });
    for (const name of ["top", "wrist"]) {
      const camera = new SimCamera(world, name);
      const reference = new CameraRenderer(name, {}, "javascript");
      const expected: string[] = [];
      const captures: Array<Promise<CameraFrame>> = [];
      for (let step = 0; step < 4; step++) {
        const arm = inverseKinematics([0.23, -0.03, 0.1 - 0.02 * step], 0.35);
        assert.ok(arm);
        world.setGoals(jointsOf(world.embodiment, arm, 1));
        world.advanceBy(0.1);
        expected.push(sha(reference.render(world.snapshot()).rgb));
        captures.push(camera.capture()); // not awaited: the next capture starts while this one's JPEG is being encoded
        if (step === 0) (await captures[0]).rgbView?.(); // read a frame, so the camera encodes ahead
      }
      const frames = await Promise.all(captures);
      assert.deepEqual(frames.map((f) => sha(f.rgbView?.() ?? f.rgb!)), expected, `${name}: each frame's own picture`);
      assert.deepEqual(frames.map((f) => sha(f.rgb!)), expected, `${name}: rgb, read after all of them`);
    }
  });

  it("the SIMD kernel validates on this Node (the renderer's default), as does the scalar one", () => {
    assert.ok(WebAssembly.validate(kernelBytes(true)) && WebAssembly.validate(kernelBytes(false)));
  });
});

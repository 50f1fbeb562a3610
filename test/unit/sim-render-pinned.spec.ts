/**
 * The simulated cameras' pictures are pinned byte for byte: the reference policies see these
 * pixels, so a faster rasterizer must draw exactly the same frames (same scene, same bytes). The
 * digests were taken on the rasterizer before its optimisation (issue 30 item 4); a deliberate
 * change of the picture updates them in the same commit and says why.
 *
 * Scenes cover both calibrated cameras and the oblique ones, every lighting preset (and an unknown
 * name), a cell's own variation (top camera mount offset, colour gains), arm poses from folded to
 * reaching down among the objects (the wrist camera then clips faces at its near plane), boxes and
 * cylinders, a lifted object, and several noise seeds, rendered in turn by one renderer per camera
 * (its cached backgrounds are reused across scenes) and once by a fresh renderer; and the render
 * bench's scripted pick (every third frame of top, wrist and head, through all four lightings).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { ResetPlan } from "../../cell-agent/hardware/types.js";
import { SimCamera } from "../../simulators/devices/sim-camera.js";
import { CameraRenderer, type RenderScene } from "../../simulators/render/rasterizer.js";
import { jointsOf } from "../../simulators/world/embodiments.js";
import { SimWorld } from "../../simulators/world/sim-world.js";
import { forwardKinematics, inverseKinematics } from "../../simulators/world/kinematics.js";
import { makeObject, type SimObject } from "../../simulators/world/objects.js";

function armAt(x: number, y: number, z: number, yawRad: number): number[] {
  const arm = inverseKinematics([x, y, z], yawRad);
  assert.ok(arm, `reachable: ${x}, ${y}, ${z}`);
  return arm;
}

const OBJECTS: SimObject[] = [
  makeObject("cube", "cube", [0.23, -0.03, 0.015], 0.35),
  makeObject("block-blue#0", "block-blue", [0.17, 0.07, 0.015], 0.2),
  makeObject("mug#0", "mug", [0.33, 0.06, 0.045], 0),
  makeObject("stapler#0", "stapler", [0.3, -0.09, 0.02], 1.1),
];
const LIFTED: SimObject[] = [makeObject("cube", "cube", [0.21, 0.02, 0.09], -0.4), makeObject("mug#0", "mug", [0.12, -0.08, 0.045], 0)];

function scene(arm: number[], opening: number, objects: SimObject[], lighting: string, noiseSeed: number): RenderScene {
  return { objects, tool: forwardKinematics(arm), opening, arm, lighting, noiseSeed };
}

const SCENES: RenderScene[] = [
  scene([0, 0, 0, 0, 0], 1, OBJECTS, "nominal", 1),
  scene(armAt(0.23, -0.03, 0.08, 0.35), 1, OBJECTS, "nominal", 12345),
  scene(armAt(0.23, -0.03, 0.016, 0.35), 0.4, OBJECTS, "dim", 987654321),
  scene(armAt(0.3, 0.06, 0.03, -0.8), 0, OBJECTS, "bright", 0xdeadbeef),
  scene(armAt(0.21, 0.02, 0.11, 1.2), 0, LIFTED, "warm", 42),
  scene(armAt(0.15, -0.1, 0.05, 0.1), 0.7, [], "no-such-lighting", 7),
];

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);

/** Digests of every scene through one renderer, in order. */
function digests(camera: string, cell: ConstructorParameters<typeof CameraRenderer>[1] = {}): string[] {
  const renderer = new CameraRenderer(camera, cell);
  return SCENES.map((s) => sha(renderer.render(s).rgb));
}

const PINNED: Record<string, string[]> = {
  top: ["76424ffaf7fbb935", "e2ea181ee128cd29", "d52632eac130373a", "96dd4951b3614559", "c6fec38cb64c3d5b", "1a2f1e8e3aae5df8"],
  wrist: ["5bd257a95c119801", "aeb218e5afe49a2d", "6fd63cfd50234ee0", "a348caf64046b29f", "32268508abbf5537", "548dc9248b25c25e"],
  head: ["e60a48b673dea0db", "3082d3f0b85adfea", "96e11ddc6b0b91c7", "9ad7181a21b07909", "89e691b4ab8743a9", "6cf8728e2ff94553"],
  side: ["4de15f33a922ed23", "13af19fb54b036dd", "28e9a2371766f7d8", "cd21d3558411bd01", "de7baf66fe452df5", "73bab6a44a0ec8d3"],
  "top+wrist variation": ["3b6dcacb11c7fbdc", "119ae19f279ae745", "263111f801f8214c", "8ba8f77c878038e5", "bd2b9bbcffa8cc6a", "49a7d8ff45706bf8", "1b5da26deff60b85", "dd1899e6624143ef", "391cb64722338b9f", "d23f58475e8cf732", "399cca06f048d1c2", "d660975554ceed4b"],
};

/**
 * The scripted pick of scripts/bench/render.ts (copied here so that editing the bench cannot move
 * the pins): the kinematic world with a cube and three distractors, the fingertip approaching,
 * descending, closing and lifting; what the cameras' bench measures is what is pinned.
 */
const PICK_PLAN: ResetPlan = {
  objects: { cube: { object: "cube", positionM: [0.23, -0.03, 0.015], yawRad: 0.35 } },
  lighting: "nominal",
  distractors: [
    { object: "block-blue", positionM: [0.17, 0.07, 0.015], yawRad: 0.2 },
    { object: "mug", positionM: [0.33, 0.06, 0.045], yawRad: 0 },
    { object: "stapler", positionM: [0.3, -0.09, 0.02], yawRad: 1.1 },
  ],
  homeRad: new Array(6).fill(0),
};
const PICK_SCRIPT: Array<[number, number, number, number, number]> = [
  [0, 0.23, -0.03, 0.08, 1],
  [2.0, 0.23, -0.03, 0.016, 1],
  [3.6, 0.23, -0.03, 0.016, 0],
  [4.4, 0.23, -0.03, 0.12, 0],
];

function pickAt(tS: number): { arm: number[]; opening: number } {
  let k = 0;
  while (k + 1 < PICK_SCRIPT.length && PICK_SCRIPT[k + 1][0] <= tS) k++;
  const [t0, x0, y0, z0, opening] = PICK_SCRIPT[k];
  const [t1, x1, y1, z1] = PICK_SCRIPT[Math.min(k + 1, PICK_SCRIPT.length - 1)];
  const s = t1 > t0 ? Math.min(1, (tS - t0) / (t1 - t0)) : 1;
  return { arm: armAt(x0 + (x1 - x0) * s, y0 + (y1 - y0) * s, z0 + (z1 - z0) * s, 0.35), opening };
}

/** Lighting through the pick, a quarter of it each: the fixed cameras redraw their backgrounds at each change. */
const PICK_LIGHTING = ["nominal", "dim", "warm", "bright"];

/** One digest per camera over every third frame (10 Hz) of the 7-second scripted pick at 30 Hz. */
function pickDigests(cameras: string[]): string[] {
  const world = new SimWorld({ model: "so101", seed: 3, engine: "kinematic" });
  world.resetScene(PICK_PLAN);
  const renderers = cameras.map((name) => new CameraRenderer(name));
  const hashes = cameras.map(() => createHash("sha256"));
  const steps = 7 * 30;
  const periodNs = BigInt(Math.round(1e9 / 30));
  const startNs = world.tNs;
  for (let step = 0; step < steps; step++) {
    const { arm, opening } = pickAt(step / 30);
    world.setGoals(jointsOf(world.embodiment, arm, opening));
    world.advanceTo(startNs + BigInt(step) * periodNs);
    if (step % 3 !== 0) continue;
    const scene = { ...world.snapshot(), lighting: PICK_LIGHTING[Math.floor((step * PICK_LIGHTING.length) / steps)] };
    renderers.forEach((renderer, k) => hashes[k].update(renderer.render(scene).rgb));
  }
  return hashes.map((h) => h.digest("hex").slice(0, 16));
}

const PINNED_PICK = { top: "e299fcd98376596e", wrist: "1752afd8949c8eb4", head: "6070ffaebf27f162" };

describe("simulated camera pictures (pinned bytes)", () => {
  it("the render bench's scripted pick, under every lighting in turn: top, wrist and head frames render the pinned bytes", () => {
    assert.deepEqual(pickDigests(Object.keys(PINNED_PICK)), Object.values(PINNED_PICK));
  });

  for (const camera of ["top", "wrist", "head", "side"]) {
    it(`${camera}: every scene renders the pinned bytes`, () => {
      assert.deepEqual(digests(camera), PINNED[camera]);
    });
  }

  it("a cell's own top-camera offset and colour gains render the pinned bytes", () => {
    const cell = { topMountOffsetM: [0.004, -0.003] as const, colourGain: [1.04, 0.97, 1.02] as const };
    assert.deepEqual([...digests("top", cell), ...digests("wrist", cell)], PINNED["top+wrist variation"]);
  });

  it("a fresh renderer, into a caller's buffer, draws the same bytes as a reused one", () => {
    const target = new Uint8Array(640 * 480 * 3);
    assert.equal(sha(new CameraRenderer("top").render(SCENES[3], target).rgb), PINNED.top[3]);
    assert.equal(sha(target), PINNED.top[3]);
  });

  it("a camera's frame gives the picture of its own instant, read at once or after later captures", async () => {
    const world = new SimWorld({ model: "so101", seed: 4, engine: "kinematic" });
    world.resetScene({ objects: { cube: { object: "cube", positionM: [0.23, -0.03, 0.015], yawRad: 0.35 } }, lighting: "dim", distractors: [], homeRad: new Array(6).fill(0) });
    for (const name of ["top", "wrist"]) {
      const camera = new SimCamera(world, name);
      const renderer = new CameraRenderer(name);
      const expected: string[] = [];
      const frames = [];
      for (let step = 0; step < 3; step++) {
        world.setGoals(jointsOf(world.embodiment, armAt(0.23, -0.03, 0.08 - 0.02 * step, 0.35), 1));
        world.advanceBy(0.2);
        expected.push(sha(renderer.render(world.snapshot()).rgb));
        frames.push(await camera.capture());
        if (step === 0) assert.equal(sha(frames[0].rgb!), expected[0], `${name}: read before the next capture`);
      }
      assert.deepEqual(frames.map((f) => sha(f.rgb!)), expected, `${name}: every frame, the first read after two later captures`);
    }
  });
});

import assert from "node:assert/strict";
import { topWorldToPixel } from "../../simulators/render/camera-calibration.js";
import { CameraRenderer, type RenderScene } from "../../simulators/render/rasterizer.js";
import { forwardKinematics } from "../../simulators/world/kinematics.js";
import { makeObject } from "../../simulators/world/objects.js";
import {
  CELL_VARIATION_RANGES, MAX_CELL_VARIATION_SCALE, NO_CELL_VARIATION, cellVariationFor, compileCellVariationOptions,
} from "../../simulators/world/cell-variation.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

const CELLS = Array.from({ length: 200 }, (_, i) => `cell-${i}`);
const HOME_ARM = [0, 0, 0, 0, 0];

describe("simulated per-cell variation", () => {
  it("is a function of the seed and the cell id: the same inputs give the same variation, other cells or seeds another", () => {
    const a = cellVariationFor("so101-b", { scale: 1, seed: 7 });
    assert.deepEqual(cellVariationFor("so101-b", { scale: 1, seed: 7 }), a);
    assert.notDeepEqual(cellVariationFor("so101-c", { scale: 1, seed: 7 }), a);
    assert.notDeepEqual(cellVariationFor("so101-b", { scale: 1, seed: 8 }), a);
  });

  it("stays within its documented ranges at every scale, and the scale stretches the same draw", () => {
    const r = CELL_VARIATION_RANGES;
    for (const scale of [0.25, 1, 2, MAX_CELL_VARIATION_SCALE]) {
      for (const cell of CELLS) {
        const v = cellVariationFor(cell, { scale, seed: 1 });
        for (const offset of v.topCameraOffsetM) assert.ok(Math.abs(offset) <= r.topCameraOffsetM * scale, `${cell} camera ${offset} at scale ${scale}`);
        for (const gain of v.colourGain) assert.ok(Math.abs(gain - 1) <= r.colourGain * scale, `${cell} colour ${gain} at scale ${scale}`);
        assert.ok(Math.abs(v.objectScale - 1) <= r.objectScale * scale, `${cell} objects ${v.objectScale} at scale ${scale}`);
        const unit = cellVariationFor(cell, { scale: 1, seed: 1 });
        assert.ok(Math.abs(v.topCameraOffsetM[0] - unit.topCameraOffsetM[0] * scale) < 1e-12, "the same direction, scaled");
      }
    }
    // The draws use their ranges (not a constant): over 200 cells each component spans most of it.
    const unitDraws = CELLS.map((cell) => cellVariationFor(cell, { scale: 1, seed: 1 }));
    const span = (values: number[]) => Math.max(...values) - Math.min(...values);
    assert.ok(span(unitDraws.map((v) => v.topCameraOffsetM[0])) > 1.6 * r.topCameraOffsetM);
    assert.ok(span(unitDraws.map((v) => v.colourGain[0])) > 1.6 * r.colourGain);
    assert.ok(span(unitDraws.map((v) => v.objectScale)) > 1.6 * r.objectScale);
  });

  it("is off at scale 0 (the default): every cell as the catalog describes it", () => {
    assert.deepEqual(compileCellVariationOptions(undefined), { scale: 0, seed: 1 });
    assert.equal(cellVariationFor("so101-a", compileCellVariationOptions(undefined)), NO_CELL_VARIATION);
  });

  it("refuses a scale out of range, a fractional seed and unknown keys, quoting the value", () => {
    assert.throws(() => compileCellVariationOptions(-0.5), /scale must be a number from 0 \(off\) to 3; got -0\.5/);
    assert.throws(() => compileCellVariationOptions({ scale: 4 }), /got 4/);
    assert.throws(() => compileCellVariationOptions({ scale: 1, seed: 1.5 }), /seed must be an integer; got 1\.5/);
    assert.throws(() => compileCellVariationOptions({ scale: 1, jitter: 2 } as never), /takes only "scale" and "seed"; got "jitter"/);
    assert.throws(() => compileCellVariationOptions("big" as never), /got "big"/);
  });

  it("reaches the world: stocked objects scaled, a kit's measured shape kept, the top picture shifted and tinted", () => {
    const variation = { scale: 2, topCameraOffsetM: [0.01, -0.006] as [number, number], colourGain: [0.8, 1, 1.2] as [number, number, number], objectScale: 1.1 };
    const world = new SimWorld({ model: "so101", seed: 1, engine: "kinematic", variation });
    world.resetScene({
      objects: {
        cube: { object: "cube", positionM: [0.22, 0, 0.015], yawRad: 0 },
        mug: { object: "kit/mug", positionM: [0.3, 0.08, 0.03], yawRad: 0, shape: { kind: "box", dimensionsMm: [60, 60, 60], massG: 300, colourRgb: [38, 150, 160] } },
      },
      lighting: "nominal", distractors: [], homeRad: new Array(6).fill(0),
    });
    assert.ok(Math.abs(world.object("cube")!.shape.halfXM - 0.015 * 1.1) < 1e-12);
    assert.ok(Math.abs(world.object("mug")!.shape.halfXM - 0.03) < 1e-12, "a kit keeps its measured shape");

    // The red cube's centroid in the top picture, nominal cell against this one.
    const scene = (objects: RenderScene["objects"]): RenderScene => ({ objects, tool: forwardKinematics(HOME_ARM), opening: 1, arm: HOME_ARM, lighting: "nominal", noiseSeed: 1 });
    const cube = [makeObject("cube", "cube", [0.22, 0, 0.015], 0)];
    const centroid = (image: { width: number; rgb: Uint8Array }) => {
      let n = 0, sc = 0, sr = 0, red = 0;
      for (let p = 0; p < image.rgb.length / 3; p++) {
        const [r, g, b] = [image.rgb[3 * p], image.rgb[3 * p + 1], image.rgb[3 * p + 2]];
        if (r > 100 && g < 80 && b < 80) {
          n++;
          sc += p % image.width;
          sr += Math.floor(p / image.width);
          red += r;
        }
      }
      return { column: sc / n, row: sr / n, red: red / n };
    };
    const nominal = centroid(new CameraRenderer("top").render(scene(cube)));
    const shifted = centroid(new CameraRenderer("top", { topMountOffsetM: variation.topCameraOffsetM, colourGain: variation.colourGain }).render(scene(cube)));
    // A camera 10 mm further along +x sees the cube 10 mm further left; 6 mm towards -y, 6 mm higher up the image.
    const [c0, r0] = topWorldToPixel(0.22, 0);
    const [c1, r1] = topWorldToPixel(0.22 - 0.01, 0 + 0.006);
    assert.ok(Math.abs(shifted.column - nominal.column - (c1 - c0)) < 1, `column shift ${shifted.column - nominal.column}, expected ${c1 - c0}`);
    assert.ok(Math.abs(shifted.row - nominal.row - (r1 - r0)) < 1, `row shift ${shifted.row - nominal.row}, expected ${r1 - r0}`);
    assert.ok(Math.abs(shifted.red / nominal.red - 0.8) < 0.03, `red gain ${shifted.red / nominal.red}`);
  });
});

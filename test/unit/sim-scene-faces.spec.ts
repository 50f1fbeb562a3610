/**
 * A cell's cameras share the faces of the scene they all draw (simulators/render/scene-faces.ts):
 * what they draw is the same picture each would draw with faces of its own, and a scene that differs
 * in anything the faces are made of (the arm, the opening, an object's pose or shape) gets faces of
 * its own, never the last scene's.
 */
import assert from "node:assert/strict";
import { CameraRenderer, type RenderScene } from "../../simulators/render/rasterizer.js";
import { armFaces } from "../../simulators/render/robot-geometry.js";
import { SceneFaces } from "../../simulators/render/scene-faces.js";
import { objectFaces } from "../../simulators/render/scene-geometry.js";
import { forwardKinematics, inverseKinematics } from "../../simulators/world/kinematics.js";
import { makeObject } from "../../simulators/world/objects.js";

function scene(x: number, opening: number, cubeX: number, cubeYawRad: number): RenderScene {
  const arm = inverseKinematics([x, 0.02, 0.08], 0.3)!;
  assert.ok(arm);
  const objects = [makeObject("cube", "cube", [cubeX, -0.03, 0.015], cubeYawRad), makeObject("block-blue#0", "block-blue", [0.28, 0.08, 0.015], 0.5)];
  return { objects, tool: forwardKinematics(arm), opening, arm, lighting: "nominal", noiseSeed: 4242 };
}

describe("scene faces shared by a cell's cameras", () => {
  it("draws every camera's frame byte for byte as with faces of its own, scene after scene", () => {
    const shared = new SceneFaces();
    const scenes = [scene(0.2, 0.5, 0.25, 0.1), scene(0.2, 0.5, 0.25, 0.1), scene(0.2, 0.6, 0.25, 0.1), scene(0.21, 0.6, 0.25, 0.1), scene(0.21, 0.6, 0.26, 0.1), scene(0.21, 0.6, 0.26, 0.2)];
    const sharing = ["top", "wrist"].map((name) => new CameraRenderer(name, { sceneFaces: shared }));
    const alone = ["top", "wrist"].map((name) => new CameraRenderer(name));
    for (const [s, view] of scenes.entries()) {
      for (let c = 0; c < 2; c++) {
        const a = Buffer.from(sharing[c]!.render(view).rgb);
        const b = Buffer.from(alone[c]!.render(view).rgb);
        assert.ok(a.equals(b), `scene ${s}, camera ${sharing[c]!.name}`);
      }
    }
  });

  it("builds a scene's faces once, and again for anything they are made of that changed", () => {
    const faces = new SceneFaces();
    const first = scene(0.2, 0.5, 0.25, 0.1);
    const arm = faces.armFaces(first.arm, first.opening);
    const objects = faces.objectFaces(first.objects);
    assert.deepEqual(arm, armFaces(first.arm, first.opening));
    assert.deepEqual(objects, objectFaces(first.objects));
    // Another snapshot of the same pose: the same faces, not built again.
    const again = scene(0.2, 0.5, 0.25, 0.1);
    assert.equal(faces.armFaces(again.arm, again.opening), arm);
    assert.equal(faces.objectFaces(again.objects), objects);
    // Each input changed on its own gets faces of its own.
    const changed: Array<[string, RenderScene]> = [["arm", scene(0.21, 0.5, 0.25, 0.1)], ["opening", scene(0.2, 0.7, 0.25, 0.1)]];
    for (const [what, s] of changed) {
      const built = faces.armFaces(s.arm, s.opening);
      assert.notEqual(built, arm, what);
      assert.deepEqual(built, armFaces(s.arm, s.opening), what);
    }
    const moved = scene(0.2, 0.5, 0.25, 0.1);
    for (const change of [(s: RenderScene) => (s.objects[1]!.positionM[2] = 0.02), (s: RenderScene) => (s.objects[0]!.yawRad = 0.3), (s: RenderScene) => (s.objects[0]!.shape = { ...s.objects[0]!.shape, heightM: 0.05 }), (s: RenderScene) => s.objects.pop()]) {
      const before = faces.objectFaces(moved.objects);
      change(moved);
      const built = faces.objectFaces(moved.objects);
      assert.notEqual(built, before);
      assert.deepEqual(built, objectFaces(moved.objects));
    }
  });
});

/**
 * Renders a named camera of the simulated cell from world state: "top" (fixed overhead,
 * orthographic), "wrist" (looking down from the gripper) and any other name as an oblique view
 * ("side" level, anything else such as "head" tilted 35 degrees). See camera-calibration.ts.
 */
import { fingerPoints, FINGER_BASE_OFFSET_M, FINGER_SPAN_PER_OPENING_M } from "../world/grasp.js";
import { TOP_CAMERA, WRIST_CAMERA, wristMetresPerPx } from "./camera-calibration.js";
import { gripperPart, renderOblique, renderPlanar, type Overlay, type PlanarView, type RenderScene } from "./rasterizer.js";

export interface RenderedImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** The gripper as the overhead camera sees it: a palm bar and two fingers, smaller when higher. */
function topGripper(scene: RenderScene): Overlay[] {
  const tool = scene.tool;
  const [x, y, z] = tool.positionM;
  const scale = Math.min(1, Math.max(0.5, 1 - 1.5 * (z - 0.03)));
  const offset = FINGER_BASE_OFFSET_M + FINGER_SPAN_PER_OPENING_M * scene.opening;
  const parts = [gripperPart(x, y, tool.yawRad, (offset + 0.006) * scale, 0.007 * scale)];
  for (const [fx, fy] of fingerPoints(tool, scene.opening)) {
    parts.push(gripperPart(x + (fx - x) * scale, y + (fy - y) * scale, tool.yawRad, 0.005 * scale, 0.009 * scale));
  }
  return parts;
}

function renderTop(scene: RenderScene): RenderedImage {
  const mpp = TOP_CAMERA.metresPerPx;
  const view: PlanarView = {
    width: TOP_CAMERA.width, height: TOP_CAMERA.height,
    originM: [TOP_CAMERA.xMinM, TOP_CAMERA.yMaxM], colStepM: [mpp, 0], rowStepM: [0, -mpp],
  };
  return { width: view.width, height: view.height, rgb: renderPlanar(scene, view, topGripper(scene)) };
}

function renderWrist(scene: RenderScene): RenderedImage {
  const tool = scene.tool;
  const [x, y, z] = tool.positionM;
  const mpp = wristMetresPerPx(z);
  const up: [number, number] = [Math.cos(tool.yawRad), Math.sin(tool.yawRad)];
  const right: [number, number] = [up[1], -up[0]];
  const { width, height } = WRIST_CAMERA;
  const view: PlanarView = {
    width, height,
    originM: [x - (width / 2) * mpp * right[0] + (height / 2) * mpp * up[0], y - (width / 2) * mpp * right[1] + (height / 2) * mpp * up[1]],
    colStepM: [mpp * right[0], mpp * right[1]],
    rowStepM: [-mpp * up[0], -mpp * up[1]],
  };
  const fingers = fingerPoints(tool, scene.opening).map(([fx, fy]) => gripperPart(fx, fy, tool.yawRad, 0.004, 0.009));
  return { width, height, rgb: renderPlanar(scene, view, fingers) };
}

/** Image size of a named camera (every simulated camera is 160 x 120). */
export function cameraSize(name: string): { width: number; height: number } {
  if (name === "top") return { width: TOP_CAMERA.width, height: TOP_CAMERA.height };
  if (name === "wrist") return { width: WRIST_CAMERA.width, height: WRIST_CAMERA.height };
  return { width: 160, height: 120 };
}

/** Renders the named camera as captured in the scene. */
export function renderCamera(scene: RenderScene, name: string): RenderedImage {
  if (name === "top") return renderTop(scene);
  if (name === "wrist") return renderWrist(scene);
  const { width, height } = cameraSize(name);
  return { width, height, rgb: renderOblique(scene, width, height, name === "side" ? 0 : (35 * Math.PI) / 180) };
}

/**
 * The scene a person must set, as the Attention message carries it (protocol/cell.proto
 * `Attention.scene_json`, wire names): each object's target pose from the episode's reset plan with
 * the task's placement tolerance, the distractors, the lighting, and the calibration of each camera
 * fixed in the cell's world frame (so the station can draw the targets over its live image).
 */
import type { InitialCondition } from "../../episode/assignment.js";
import type { CameraCalibration } from "../../hardware/types.js";
import type { PendingScene } from "./scene-ready-gate.js";

export interface SceneTargetJson {
  object: string;
  position_m: [number, number, number];
  yaw_rad: number;
  /** The task's `tol_mm` for this object, in metres; absent when the task states none. */
  tolerance_m?: number;
}

export interface SceneAttentionJson {
  lighting: string;
  objects: Record<string, SceneTargetJson>;
  distractors: Array<{ object: string; position_m: [number, number, number]; yaw_rad: number }>;
  /** Calibrations (CameraCalibration, snake_case) of the cameras whose extrinsics are in the world frame. */
  cameras: Record<string, CameraCalibration>;
}

export function sceneAttention(
  pending: PendingScene, initialConditions: Record<string, InitialCondition>, cameras: ReadonlyArray<{ name: string; calibration?: CameraCalibration }> = [],
): SceneAttentionJson {
  const objects: Record<string, SceneTargetJson> = {};
  for (const [name, target] of Object.entries(pending.objects)) {
    const tolMm = initialConditions[name]?.tolMm;
    objects[name] = {
      object: target.object, position_m: target.positionM, yaw_rad: target.yawRad,
      ...(tolMm !== undefined ? { tolerance_m: tolMm / 1000 } : {}),
    };
  }
  return {
    lighting: pending.lighting,
    objects,
    distractors: pending.distractors.map((d) => ({ object: d.object, position_m: d.positionM, yaw_rad: d.yawRad })),
    cameras: Object.fromEntries(cameras.flatMap((c) => (c.calibration?.extrinsics.parent_frame === "world" ? [[c.name, c.calibration]] : []))),
  };
}

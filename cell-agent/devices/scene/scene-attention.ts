/**
 * The scene a person must set, as the Attention message carries it (protocol/cell.proto
 * `Attention.scene_json`, wire names): each object's target pose from the episode's reset plan with
 * the task's placement tolerance, the distractors, and the lighting.
 */
import type { InitialCondition } from "../../episode/assignment.js";
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
}

export function sceneAttention(pending: PendingScene, initialConditions: Record<string, InitialCondition>): SceneAttentionJson {
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
  };
}

/**
 * "assay/ref-policy:novice": a hasty scripted picker. It looks once, at the first overhead frame,
 * keeps pixels passing a fixed RGB rule tuned under nominal light, and aims at the centre of their
 * bounding box (any red-ish clutter drags it off; dim or tinted light can hide the cube). It
 * ignores the cube's yaw, jumps to each waypoint at full servo speed and lifts at once.
 */
import type { Observation, PolicySession } from "../../cell-agent/hardware/types.js";
import { topPixelToWorld } from "../render/camera-calibration.js";
import type { Embodiment } from "../world/embodiments.js";
import { goals, measuredArm, reachableArm } from "./motion.js";
import { decodeFrame, fixedRedMask, maskBoundingBox } from "./vision.js";

/** Waypoints: [seconds after the first act, fingertip z, gripper opening]. */
const SCRIPT: Array<[number, number, number]> = [
  [0, 0.06, 1],
  [1.5, 0.015, 1],
  [2.0, 0.015, 0],
  [2.5, 0.12, 0],
];

export class NovicePolicy implements PolicySession {
  private startNs: bigint | undefined;
  private target: [number, number] = [0.22, 0];
  private homeArm: number[] = [];

  constructor(private readonly embodiment: Embodiment) {}

  async reset(): Promise<void> {
    this.startNs = undefined;
  }

  async close(): Promise<void> {}

  async act(observation: Observation): Promise<number[]> {
    if (this.startNs === undefined) {
      this.startNs = observation.tNs;
      this.homeArm = measuredArm(this.embodiment, observation);
      this.target = this.look(observation) ?? [0.22, 0];
    }
    const elapsedS = Number(observation.tNs - this.startNs) / 1e9;
    const [, z, opening] = SCRIPT.filter(([at]) => at <= elapsedS).at(-1)!;
    const [x, y] = this.target;
    // Roll stays 0: the closing axis just follows the base yaw.
    const arm = reachableArm([x, y, z], Math.atan2(y, x)) ?? this.homeArm;
    return goals(this.embodiment, arm, opening);
  }

  private look(observation: Observation): [number, number] | null {
    const frame = observation.cameras.top;
    if (!frame) return null;
    const image = decodeFrame(frame);
    const box = maskBoundingBox(fixedRedMask(image), image.width);
    return box ? topPixelToWorld((box.c0 + box.c1 + 1) / 2, (box.r0 + box.r1 + 1) / 2) : null;
  }
}

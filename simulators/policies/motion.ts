/**
 * Motion helpers for the reference policies: the robot's own geometry (embodiment and arm
 * kinematics, as a real policy would know its robot), minimum-jerk profiles, and goal vectors.
 */
import type { Observation } from "../../cell-agent/hardware/types.js";
import { armOf, jointsOf, type Embodiment } from "../world/embodiments.js";
import { forwardKinematics, inverseKinematics, squareYawError, wrapAngle, type ToolPose } from "../world/kinematics.js";

/** 0..1 -> 0..1 with zero velocity and acceleration at both ends. */
export function minJerk(s: number): number {
  const t = Math.min(1, Math.max(0, s));
  return t * t * t * (10 - 15 * t + 6 * t * t);
}

/** Where the arm is, from the observation's joint readings (home when the contract has none). */
export function measuredArm(embodiment: Embodiment, observation: Observation): number[] {
  return armOf(embodiment, observation.jointPositionsRad ?? new Array<number>(embodiment.dof).fill(0));
}

export function measuredTool(embodiment: Embodiment, observation: Observation): ToolPose {
  return forwardKinematics(measuredArm(embodiment, observation));
}

/**
 * IK for a fingertip target, pulling it toward the robot until reachable. Returns null only if
 * nothing along the way is reachable.
 */
export function reachableArm(target: readonly number[], toolYawRad: number): number[] | null {
  for (let scale = 1; scale > 0.5; scale -= 0.02) {
    const arm = inverseKinematics([target[0] * scale, target[1] * scale, target[2]], toolYawRad);
    if (arm) return arm;
  }
  return null;
}

/** Of a square's four face directions, the tool yaw needing the least wrist roll at this base yaw. */
export function toolYawFor(squareYawRad: number, xM: number, yM: number): number {
  const baseYaw = Math.atan2(yM, xM);
  let best = squareYawRad;
  for (let k = -4; k <= 4; k++) {
    const candidate = squareYawRad + (k * Math.PI) / 2;
    if (Math.abs(wrapAngle(candidate - baseYaw)) < Math.abs(wrapAngle(best - baseYaw))) best = candidate;
  }
  return wrapAngle(best);
}

/** The goal vector (robot dof long) for an arm vector and gripper opening. */
export function goals(embodiment: Embodiment, arm: readonly number[], opening: number): number[] {
  return jointsOf(embodiment, arm, opening);
}

/** Joint-space blend between two arm vectors. */
export function blendArm(from: readonly number[], to: readonly number[], s: number): number[] {
  const k = minJerk(s);
  return from.map((q, i) => q + (to[i] - q) * k);
}

export { squareYawError };

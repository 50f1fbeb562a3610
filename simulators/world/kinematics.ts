/**
 * Kinematics of the simulated manipulation arm: base yaw, shoulder pitch, elbow pitch, wrist pitch
 * and wrist roll, in that order (the "arm vector"). Every robot model is simulated with this one
 * chain (see embodiments.ts for which of a model's joints play which role).
 *
 * Frame: origin at the robot base on the table top, x forward, y left, z up. With all joints at
 * zero the arm points straight up. Pitch joints bend the chain forward/down: the upper arm's angle
 * above the horizontal is pi/2 - shoulder, each later pitch joint subtracts from that.
 */

/** Link lengths, metres. */
export const ARM_GEOMETRY = {
  /** Table top to the shoulder axis. */
  baseHeightM: 0.1,
  upperArmM: 0.12,
  forearmM: 0.13,
  /** Wrist pitch axis to the point between the fingertips. */
  wristToFingertipM: 0.1,
} as const;

/** Symmetric joint limit of every arm joint, radians. */
export const ARM_JOINT_LIMIT_RAD = 2.9;

export interface ToolPose {
  /** The point between the fingertips, world frame, metres. */
  positionM: [number, number, number];
  /** Direction of the fingers' closing axis about world z (valid when the tool points down). */
  yawRad: number;
  /** Angle of the last link above the horizontal; -pi/2 points straight down. */
  pitchRad: number;
}

/** Wraps an angle to (-pi, pi]. */
export function wrapAngle(angleRad: number): number {
  let a = angleRad % (2 * Math.PI);
  if (a <= -Math.PI) a += 2 * Math.PI;
  if (a > Math.PI) a -= 2 * Math.PI;
  return a;
}

/** Smallest difference between two yaws of a square (90 degree symmetry), in [0, pi/4]. */
export function squareYawError(aRad: number, bRad: number): number {
  const quarter = Math.PI / 2;
  let d = (aRad - bRad) % quarter;
  if (d < 0) d += quarter;
  return Math.min(d, quarter - d);
}

/** Forward kinematics of the arm vector [yaw, shoulder, elbow, wristPitch, wristRoll]. */
export function forwardKinematics(arm: readonly number[]): ToolPose {
  const { baseHeightM, upperArmM, forearmM, wristToFingertipM } = ARM_GEOMETRY;
  const [yaw, shoulder, elbow, wristPitch, wristRoll] = arm;
  const a1 = Math.PI / 2 - shoulder;
  const a2 = a1 - elbow;
  const a3 = a2 - wristPitch;
  const reach = upperArmM * Math.cos(a1) + forearmM * Math.cos(a2) + wristToFingertipM * Math.cos(a3);
  const z = baseHeightM + upperArmM * Math.sin(a1) + forearmM * Math.sin(a2) + wristToFingertipM * Math.sin(a3);
  return {
    positionM: [reach * Math.cos(yaw), reach * Math.sin(yaw), z],
    yawRad: wrapAngle(yaw + wristRoll),
    pitchRad: a3,
  };
}

/**
 * Inverse kinematics, elbow up: the arm vector that puts the fingertip point at `positionM` with
 * the closing axis at `toolYawRad`. Prefers the tool pointing straight down and tilts it forward
 * (up to 70 degrees) only when the target is out of reach that way. Returns null when unreachable.
 */
export function inverseKinematics(positionM: readonly [number, number, number] | readonly number[], toolYawRad: number): number[] | null {
  const { baseHeightM, upperArmM, forearmM, wristToFingertipM } = ARM_GEOMETRY;
  const [x, y, z] = positionM;
  const reach = Math.hypot(x, y);
  const yaw = reach < 1e-6 ? 0 : Math.atan2(y, x);
  for (let tiltDeg = 0; tiltDeg <= 70; tiltDeg += 2.5) {
    const a3 = -Math.PI / 2 + (tiltDeg * Math.PI) / 180;
    const wristR = reach - wristToFingertipM * Math.cos(a3);
    const wristDz = z - wristToFingertipM * Math.sin(a3) - baseHeightM;
    const d = Math.hypot(wristR, wristDz);
    if (d > (upperArmM + forearmM) * 0.999 || d < Math.abs(upperArmM - forearmM) + 1e-6) continue;
    const cosInner = (upperArmM ** 2 + d ** 2 - forearmM ** 2) / (2 * upperArmM * d);
    const a1 = Math.atan2(wristDz, wristR) + Math.acos(Math.min(1, Math.max(-1, cosInner)));
    const a2 = Math.atan2(wristDz - upperArmM * Math.sin(a1), wristR - upperArmM * Math.cos(a1));
    const arm = [yaw, Math.PI / 2 - a1, wrapAngle(a1 - a2), wrapAngle(a2 - a3), wrapAngle(toolYawRad - yaw)];
    if (arm.every((q) => Math.abs(q) <= ARM_JOINT_LIMIT_RAD)) return arm;
  }
  return null;
}

/** World points of the chain for drawing: base, shoulder, elbow, wrist, fingertip. */
export function chainPoints(arm: readonly number[]): Array<[number, number, number]> {
  const { baseHeightM, upperArmM, forearmM, wristToFingertipM } = ARM_GEOMETRY;
  const [yaw, shoulder, elbow, wristPitch] = arm;
  const angles = [Math.PI / 2 - shoulder];
  angles.push(angles[0] - elbow, angles[0] - elbow - wristPitch);
  const lengths = [upperArmM, forearmM, wristToFingertipM];
  const points: Array<[number, number, number]> = [[0, 0, 0], [0, 0, baseHeightM]];
  let reach = 0;
  let z = baseHeightM;
  for (let k = 0; k < 3; k++) {
    reach += lengths[k] * Math.cos(angles[k]);
    z += lengths[k] * Math.sin(angles[k]);
    points.push([reach * Math.cos(yaw), reach * Math.sin(yaw), z]);
  }
  return points;
}

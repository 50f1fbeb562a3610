/**
 * Forward kinematics the safety envelope uses for its workspace box: the fingertip point of an arm
 * from its joint targets, in the robot base frame (origin on the table top under the base, x
 * forward, y left, z up, metres).
 *
 * Only models whose geometry Assay knows have an entry. Today that is the SO-101: a yaw, three
 * pitch joints and a wrist roll, with Assay's SO-101 link lengths (the geometry its simulated
 * cells move, simulators/world/kinematics.ts; test/unit/safety-envelope.spec.ts pins the two
 * together). The catalogue's other models (fr3, aloha, g1, b2z1, stretch3) list joints only, so the
 * envelope applies no workspace box to them; their per-step and joint limits still apply.
 */

/** A yaw-pitch-pitch-pitch-roll chain: which joints play which role, and its link lengths. */
export interface ArmChain {
  /** Joint names for [yaw, shoulder pitch, elbow pitch, wrist pitch, wrist roll]. */
  joints: readonly [string, string, string, string, string];
  /** Table top to the shoulder axis, metres. */
  baseHeightM: number;
  upperArmM: number;
  forearmM: number;
  /** Wrist pitch axis to the point between the fingertips, metres. */
  wristToFingertipM: number;
}

/** Models with known kinematics. With all joints at zero the arm points straight up. */
export const ARM_CHAINS: Readonly<Record<string, ArmChain>> = {
  so101: {
    joints: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"],
    baseHeightM: 0.1,
    upperArmM: 0.12,
    forearmM: 0.13,
    wristToFingertipM: 0.1,
  },
};

/** Joint vector (robot order) to the fingertip point, metres. */
export type ForwardKinematics = (jointsRad: readonly number[]) => [number, number, number];

/** The model's forward kinematics over its joint order, or undefined when Assay does not know them. */
export function forwardKinematicsFor(robotModel: string, jointNames: readonly string[]): ForwardKinematics | undefined {
  const chain = ARM_CHAINS[robotModel];
  if (!chain) return undefined;
  const index = chain.joints.map((name) => jointNames.indexOf(name));
  if (index.some((i) => i < 0)) return undefined;
  return (jointsRad) => {
    const [yaw, shoulder, elbow, wristPitch] = index.map((i) => jointsRad[i]);
    const a1 = Math.PI / 2 - shoulder;
    const a2 = a1 - elbow;
    const a3 = a2 - wristPitch;
    const reach = chain.upperArmM * Math.cos(a1) + chain.forearmM * Math.cos(a2) + chain.wristToFingertipM * Math.cos(a3);
    const z = chain.baseHeightM + chain.upperArmM * Math.sin(a1) + chain.forearmM * Math.sin(a2) + chain.wristToFingertipM * Math.sin(a3);
    return [reach * Math.cos(yaw), reach * Math.sin(yaw), z];
  };
}

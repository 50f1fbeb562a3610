/**
 * How each catalog robot model drives the one simulated arm (kinematics.ts): which of the model's
 * joints form the arm vector [yaw, shoulder, elbow, wristPitch, wristRoll], which joint is the
 * gripper, and how the gripper joint maps to an opening. Joints in neither role are held at their
 * home value (0) whatever is commanded; they still report state.
 *
 * The mappings are a simulation convenience, not the real robots' kinematics: e.g. stretch3's
 * prismatic lift and extension act as the shoulder and elbow pitches here.
 */
import { loadFirmwarePins, type RobotModel } from "../../firmware-pins/pins.js";

export interface Embodiment {
  model: string;
  dof: number;
  jointNames: readonly string[];
  /** Indices into the model's joint vector for [yaw, shoulder, elbow, wristPitch, wristRoll]. */
  armJoints: readonly [number, number, number, number, number];
  gripperJoint: number;
  /** Gripper joint value at fully open (opening 1); 0 is closed. */
  gripperOpenValue: number;
}

const ROLES: Record<string, { arm: [string, string, string, string, string]; gripper: string; gripperOpenValue: number }> = {
  so101: { arm: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"], gripper: "gripper", gripperOpenValue: 1.5 },
  // Joints 3 and 5 (the redundant elbow/forearm rolls) are held at home.
  fr3: { arm: ["fr3_joint1", "fr3_joint2", "fr3_joint4", "fr3_joint6", "fr3_joint7"], gripper: "fr3_finger", gripperOpenValue: 0.04 },
  // The left arm manipulates; the right arm and the forearm roll are held.
  aloha: { arm: ["left_waist", "left_shoulder", "left_elbow", "left_wrist_angle", "left_wrist_rotate"], gripper: "left_gripper", gripperOpenValue: 1.2 },
  // The right arm manipulates with the waist as base yaw; the shoulder roll/yaw act as wrist pitch/roll. Legs are held.
  g1: { arm: ["waist_yaw", "right_shoulder_pitch", "right_elbow", "right_shoulder_roll", "right_shoulder_yaw"], gripper: "right_hand", gripperOpenValue: 1.0 },
  // The Z1 arm on the quadruped; z1_joint5 (forearm roll) and the legs are held.
  b2z1: { arm: ["z1_joint1", "z1_joint2", "z1_joint3", "z1_joint4", "z1_joint6"], gripper: "z1_gripper", gripperOpenValue: 1.0 },
  stretch3: { arm: ["base_rotate", "lift", "arm_extend", "wrist_pitch", "wrist_roll"], gripper: "gripper", gripperOpenValue: 1.0 },
};

let models: RobotModel[] | undefined;

/** The catalog's robot model (throws with the known ids when missing). */
export function catalogModel(modelId: string): RobotModel {
  models ??= loadFirmwarePins().models;
  const model = models.find((m) => m.id === modelId);
  if (!model) throw new Error(`robot model "${modelId}" is not in the catalog; known models: ${models.map((m) => m.id).join(", ")}`);
  return model;
}

/** The embodiment of a catalog model; throws when the model has no simulator mapping. */
export function embodimentFor(modelId: string): Embodiment {
  const model = catalogModel(modelId);
  const roles = ROLES[modelId];
  if (!roles) throw new Error(`robot model "${modelId}" has no simulator embodiment; simulated models: ${Object.keys(ROLES).join(", ")}`);
  const indexOf = (joint: string) => {
    const index = model.joints.indexOf(joint);
    if (index < 0) throw new Error(`embodiment of "${modelId}" names joint "${joint}", which the catalog does not list`);
    return index;
  };
  return {
    model: modelId,
    dof: model.dof,
    jointNames: model.joints,
    armJoints: roles.arm.map(indexOf) as unknown as Embodiment["armJoints"],
    gripperJoint: indexOf(roles.gripper),
    gripperOpenValue: roles.gripperOpenValue,
  };
}

/** The arm vector out of a full joint vector. */
export function armOf(embodiment: Embodiment, joints: readonly number[]): number[] {
  return embodiment.armJoints.map((i) => joints[i] ?? 0);
}

/** A full joint vector (length dof, other joints 0) from an arm vector and a gripper opening 0..1. */
export function jointsOf(embodiment: Embodiment, arm: readonly number[], opening: number): number[] {
  const joints = new Array<number>(embodiment.dof).fill(0);
  embodiment.armJoints.forEach((joint, k) => (joints[joint] = arm[k]));
  joints[embodiment.gripperJoint] = Math.min(1, Math.max(0, opening)) * embodiment.gripperOpenValue;
  return joints;
}

/** Gripper opening 0..1 from the gripper joint value. */
export function openingOf(embodiment: Embodiment, joints: readonly number[]): number {
  return Math.min(1, Math.max(0, (joints[embodiment.gripperJoint] ?? 0) / embodiment.gripperOpenValue));
}

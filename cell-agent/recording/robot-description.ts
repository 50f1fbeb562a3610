/**
 * What the recording carries so Foxglove's 3D panel shows the arm: a URDF of the robot on
 * `/robot_description` (ROS's topic for it) and, at every control step, the transform of each link
 * from its parent on `/tf` (foxglove.FrameTransforms), computed from the measured joint angles.
 *
 * Only models whose kinematics Assay knows get them (cell-agent/safety/arm-kinematics.ts: today the
 * SO-101). The URDF is deliberately small and honest: Assay's SO-101 chain (a base yaw, three pitch
 * joints, a wrist roll; the link lengths the simulated cells move and the safety envelope uses) with
 * cylinders for links, not the vendor's meshes. Joint limits are the simulation's ±2.9 rad
 * (docs/simulation.md): a real SO-101's limits are its calibrated range, which the agent does not
 * put into the URDF.
 *
 * Frames: `base_link` is the robot base frame (origin on the table top under the base, x forward,
 * y left, z up). With every joint at zero the arm points straight up; the pitch joints turn about
 * +y, so a positive angle tips the chain forward, as in arm-kinematics.ts.
 */
import type { FrameTransformMessage, ProtoTimestamp } from "../../protocol/recording/foxglove-protobuf.js";
import { ARM_CHAINS, type ArmChain } from "../safety/arm-kinematics.js";

/** Symmetric limit of every arm joint in the URDF, radians (the simulated arm's). */
export const URDF_JOINT_LIMIT_RAD = 2.9;
const LINK_RADIUS_M = 0.02;

interface UrdfJoint {
  name: string;
  parent: string;
  child: string;
  /** Offset of the joint from the parent link's frame, metres. */
  originM: [number, number, number];
  axis: "y" | "z" | null;
  /** Index of the joint's angle in the robot's joint vector (null: fixed). */
  index: number | null;
}

export interface RobotDescription {
  urdf: string;
  /** The transforms of every link from its parent at the measured joint angles (robot joint order). */
  transforms(positionRad: readonly number[], stamp: ProtoTimestamp): FrameTransformMessage[];
}

function chainJoints(chain: ArmChain, jointNames: readonly string[]): UrdfJoint[] | undefined {
  const index = chain.joints.map((name) => jointNames.indexOf(name));
  if (index.some((i) => i < 0)) return undefined;
  const [pan, lift, elbow, wristFlex, wristRoll] = chain.joints;
  return [
    { name: pan, parent: "base_link", child: "shoulder_link", originM: [0, 0, chain.baseHeightM], axis: "z", index: index[0]! },
    { name: lift, parent: "shoulder_link", child: "upper_arm_link", originM: [0, 0, 0], axis: "y", index: index[1]! },
    { name: elbow, parent: "upper_arm_link", child: "forearm_link", originM: [0, 0, chain.upperArmM], axis: "y", index: index[2]! },
    { name: wristFlex, parent: "forearm_link", child: "wrist_link", originM: [0, 0, chain.forearmM], axis: "y", index: index[3]! },
    { name: wristRoll, parent: "wrist_link", child: "gripper_link", originM: [0, 0, 0], axis: "z", index: index[4]! },
    { name: "fingertip", parent: "gripper_link", child: "fingertip_link", originM: [0, 0, chain.wristToFingertipM], axis: null, index: null },
  ];
}

/** Length of the cylinder drawn for each link (along its z), metres. */
function linkLengths(chain: ArmChain): Record<string, number> {
  return { base_link: chain.baseHeightM, upper_arm_link: chain.upperArmM, forearm_link: chain.forearmM, gripper_link: chain.wristToFingertipM };
}

function urdfOf(model: string, joints: UrdfJoint[], chain: ArmChain): string {
  const lengths = linkLengths(chain);
  const link = (name: string) => {
    const length = lengths[name];
    if (!length) return `  <link name="${name}"/>`;
    return [
      `  <link name="${name}">`,
      `    <visual><origin xyz="0 0 ${length / 2}" rpy="0 0 0"/><geometry><cylinder radius="${LINK_RADIUS_M}" length="${length}"/></geometry></visual>`,
      `  </link>`,
    ].join("\n");
  };
  const joint = (j: UrdfJoint) => [
    `  <joint name="${j.name}" type="${j.axis ? "revolute" : "fixed"}">`,
    `    <parent link="${j.parent}"/><child link="${j.child}"/>`,
    `    <origin xyz="${j.originM.join(" ")}" rpy="0 0 0"/>`,
    ...(j.axis ? [
      `    <axis xyz="${j.axis === "y" ? "0 1 0" : "0 0 1"}"/>`,
      `    <limit lower="${-URDF_JOINT_LIMIT_RAD}" upper="${URDF_JOINT_LIMIT_RAD}" effort="3" velocity="2.5"/>`,
    ] : []),
    `  </joint>`,
  ].join("\n");
  const links = ["base_link", ...joints.map((j) => j.child)];
  return [`<?xml version="1.0"?>`, `<robot name="${model}">`, ...links.map(link), ...joints.map(joint), `</robot>`, ""].join("\n");
}

/** Rotation of `angle` about the y or z axis as a quaternion x, y, z, w. */
function rotation(axis: "y" | "z" | null, angleRad: number): [number, number, number, number] {
  if (!axis) return [0, 0, 0, 1];
  const s = Math.sin(angleRad / 2);
  const c = Math.cos(angleRad / 2);
  return axis === "y" ? [0, s, 0, c] : [0, 0, s, c];
}

/** The description of `robotModel` over its joint order, or undefined when Assay does not know its kinematics. */
export function robotDescriptionFor(robotModel: string | undefined, jointNames: readonly string[]): RobotDescription | undefined {
  const chain = robotModel ? ARM_CHAINS[robotModel] : undefined;
  const joints = chain ? chainJoints(chain, jointNames) : undefined;
  if (!chain || !joints || !robotModel) return undefined;
  return {
    urdf: urdfOf(robotModel, joints, chain),
    transforms: (positionRad, stamp) => joints.map((j) => ({
      timestamp: stamp, parentFrameId: j.parent, childFrameId: j.child, translation: j.originM,
      rotation: rotation(j.axis, j.index === null ? 0 : positionRad[j.index] ?? 0),
    })),
  };
}

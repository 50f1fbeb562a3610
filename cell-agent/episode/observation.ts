/**
 * What a policy may see: the run's `observation_contract` restricts cameras and state. The contract
 * is read as `{cameras?: string[] | Record<string, unknown>, state?: string[]}`; a missing part
 * means "everything the cell has".
 */
import type { CameraFrame, JointState, Observation, Wrench } from "../hardware/types.js";

export interface ObservationContract {
  /** Camera names the policy sees, or undefined for all. */
  cameras?: ReadonlySet<string>;
  /** State fields ("joint_positions", "joint_velocities", "gripper_state", "ft_wrist"), or undefined for all. */
  state?: ReadonlySet<string>;
}

function names(value: unknown): Set<string> | undefined {
  if (Array.isArray(value)) return new Set(value.map(String));
  if (value && typeof value === "object") return new Set(Object.keys(value));
  return undefined;
}

export function contractOf(policy: Record<string, unknown>): ObservationContract {
  const raw = policy.observation_contract;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return {};
  const contract = raw as Record<string, unknown>;
  return { cameras: names(contract.cameras), state: names(contract.state) };
}

export function buildObservation(
  contract: ObservationContract,
  input: {
    tNs: bigint; joints: JointState | undefined; gripperOpening: number | undefined; wrench?: Wrench; frames: ReadonlyMap<string, CameraFrame>; instruction?: string;
  },
): Observation {
  const wants = (field: string) => !contract.state || contract.state.has(field);
  const cameras: Record<string, CameraFrame> = {};
  for (const [name, frame] of input.frames) if (!contract.cameras || contract.cameras.has(name)) cameras[name] = frame;
  const observation: Observation = { tNs: input.tNs, cameras };
  if (input.joints && wants("joint_positions")) observation.jointPositionsRad = input.joints.positionRad;
  if (input.joints && wants("joint_velocities")) observation.jointVelocitiesRadS = input.joints.velocityRadS;
  if (input.gripperOpening !== undefined && wants("gripper_state")) observation.gripperOpening = input.gripperOpening;
  if (input.wrench && wants("ft_wrist")) observation.wristWrench = { forceN: input.wrench.forceN, torqueNm: input.wrench.torqueNm };
  if (input.instruction !== undefined) observation.instruction = input.instruction;
  return observation;
}

/** Yaw (rotation about z), radians, of an x, y, z, w quaternion. */
export function yawOf([x, y, z, w]: readonly [number, number, number, number]): number {
  return Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

/**
 * The least an observation must carry for an ONNX policy to read it, declared structurally so the
 * cell agent's `Observation` (cell-agent/hardware/types.ts) is one without either side importing the
 * other; and the `observation.state` vector built from it in the contract's channel order.
 */
import { stateChannelWidth, type StateChannel } from "./io-convention.js";

/** A camera frame as the policy reads it (the agent's CameraFrame is one). */
export interface PolicyCameraFrame {
  width: number;
  height: number;
  /** The frame as the camera published it. */
  jpeg: Uint8Array;
  /** Raw RGB24 pixels of the same frame, row-major, when the source has them. */
  rgb?: Uint8Array;
}

/** One control step's observation, already restricted to the contract (the agent's Observation is one). */
export interface PolicyObservation {
  jointPositionsRad?: readonly number[];
  jointVelocitiesRadS?: readonly number[];
  /** 0 (closed) to 1 (open). */
  gripperOpening?: number;
  /** The wrist force-torque sensor's latest reading, when the contract lists `ft_wrist`. */
  wristWrench?: { forceN: readonly number[]; torqueNm: readonly number[] };
  /** Latest frame of each contract camera, by camera name. */
  cameras: Readonly<Record<string, PolicyCameraFrame>>;
}

function channelValues(observation: PolicyObservation, channel: StateChannel): readonly number[] | undefined {
  switch (channel) {
    case "joint_positions":
      return observation.jointPositionsRad;
    case "joint_velocities":
      return observation.jointVelocitiesRadS;
    case "gripper_state":
      return observation.gripperOpening === undefined ? undefined : [observation.gripperOpening];
    case "ft_wrist":
      return observation.wristWrench ? [...observation.wristWrench.forceN, ...observation.wristWrench.torqueNm] : undefined;
  }
}

/**
 * `observation.state`: the channels' values concatenated in order (joint_positions and
 * joint_velocities `dof` values each, gripper_state 1, ft_wrist 6: force xyz then torque xyz).
 * Throws when the observation lacks a channel or a channel has the wrong number of values.
 */
export function stateVector(observation: PolicyObservation, channels: readonly StateChannel[], dof: number): Float32Array {
  const width = channels.reduce((sum, c) => sum + stateChannelWidth(c, dof), 0);
  const state = new Float32Array(width);
  let offset = 0;
  for (const channel of channels) {
    const values = channelValues(observation, channel);
    const expected = stateChannelWidth(channel, dof);
    if (values === undefined) throw new Error(`the observation has no ${channel}, which policy.observation_contract.state lists`);
    if (values.length !== expected) throw new Error(`the observation's ${channel} has ${values.length} values; ${expected} expected`);
    state.set(values, offset);
    offset += expected;
  }
  return state;
}

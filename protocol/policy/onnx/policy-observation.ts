/**
 * What an ONNX policy reads of an observation (protocol/policy/policy-observation.ts, the structural
 * type the agent's `Observation` satisfies, less its clock), and the `observation.state` vector built
 * from it in the contract's channel order.
 */
import type { PolicyObservation as StepObservation } from "../policy-observation.js";
import { stateChannelWidth, type StateChannel } from "./io-convention.js";

export type { PolicyCameraFrame } from "../policy-observation.js";
/** One control step's observation, restricted to the contract, as a model reads it (no clock: a graph has no time input). */
export type PolicyObservation = Omit<StepObservation, "tNs">;

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

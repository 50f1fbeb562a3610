/**
 * The names and shapes an ONNX checkpoint's inputs and outputs must have (docs/policies-onnx.md).
 * They are LeRobot's feature names, so a LeRobot policy exports with its own keys:
 *
 * - `observation.state`            float32 [1, S]: the contract's state channels, concatenated in
 *                                  the contract's order (widths below).
 * - `observation.images.<camera>`  float32 [1, 3, H, W], RGB in [0, 1]: one per contract camera the
 *                                  model reads, resized to the model's H x W.
 * - `noise`                        float32 [1, ...]: standard normal draws times `inference.temp`,
 *                                  seeded per episode (diffusion and flow-matching samplers).
 * - `action`  (output)             float32 [1, chunk, dof] or [1, dof] (one step), joint targets.
 *
 * The leading (batch) dimension may be 1 or symbolic.
 */

export const STATE_INPUT = "observation.state";
export const IMAGE_INPUT_PREFIX = "observation.images.";
export const NOISE_INPUT = "noise";
export const ACTION_OUTPUT = "action";

/** State channels of an observation contract, in the order the coordinator accepts them. */
export const STATE_CHANNEL_NAMES = ["joint_positions", "joint_velocities", "gripper_state", "ft_wrist"] as const;
export type StateChannel = (typeof STATE_CHANNEL_NAMES)[number];

/** How many values a channel adds to `observation.state` on a robot with `dof` joints. */
export function stateChannelWidth(channel: StateChannel, dof: number): number {
  switch (channel) {
    case "joint_positions":
    case "joint_velocities":
      return dof;
    case "gripper_state":
      return 1;
    case "ft_wrist":
      return 6;
  }
}

/** Whether a contract's state entry is one of the channels above. */
export function isStateChannel(name: string): name is StateChannel {
  return (STATE_CHANNEL_NAMES as readonly string[]).includes(name);
}

/** The camera an input name reads, or undefined when it is not an image input. */
export function cameraOfInput(inputName: string): string | undefined {
  return inputName.startsWith(IMAGE_INPUT_PREFIX) ? inputName.slice(IMAGE_INPUT_PREFIX.length) : undefined;
}

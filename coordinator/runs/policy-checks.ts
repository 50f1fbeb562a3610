/**
 * A run body's `policy` checked against the pinned robot and scene before any motor moves (spec
 * section 4: contracts `action_space` and `observation_contract` are validated at submission), and
 * a container image against what the matching connected cells can run. The policy's shape (types,
 * required and unknown fields) is coordinator/runs/run-schemas.ts `Policy`, checked before this.
 */
import type { RobotModel } from "../../firmware-pins/pins.js";
import { cameraNames, environmentId, type CatalogEnvironment } from "../catalog/environments.js";
import type { FleetView } from "../cells/fleet-view.js";
import { contract, q } from "./field-checks.js";
import { STATE_CHANNELS } from "./run-request.js";

/** The instrument a state channel is read from; a contract may only ask for what the scene has. */
const STATE_INSTRUMENT: Record<(typeof STATE_CHANNELS)[number], string> = {
  joint_positions: "joint_states",
  joint_velocities: "joint_states",
  gripper_state: "gripper_state",
  ft_wrist: "ft_wrist",
};

/** A policy whose shape coordinator/runs/run-schemas.ts `Policy` has checked. */
interface CheckedPolicy {
  type: "container" | "checkpoint" | "endpoint";
  image?: string;
  action_space?: { type: "joint_position"; dim: number; units?: "radians" | "lerobot"; use_degrees?: boolean };
  observation_contract?: { cameras?: string[]; state?: string[]; units?: "radians" | "lerobot" };
}

/** Robot models whose cells convert LeRobot's units (an SO-101 follower's calibration, imported on the cell). */
const LEROBOT_UNIT_MODELS = ["so101"];

/**
 * What a policy's declared contracts must match: the pinned robot's degrees of freedom, the
 * scene's cameras and instruments, and (container) an image the matching connected cells can run.
 * Call it on a policy whose shape has been checked (run bodies, checkpoint pushes).
 */
export async function validatePolicy(value: unknown, model: RobotModel, env: CatalogEnvironment, firmware: string, fleet: FleetView): Promise<void> {
  const policy = value as CheckedPolicy;
  if (policy.action_space !== undefined && policy.action_space.dim !== model.dof) {
    contract(`policy.action_space.dim must equal ${model.id}'s ${model.dof} degrees of freedom (${model.joints.join(", ")}); got ${q(policy.action_space.dim)}`);
  }
  validateUnits(policy, model);
  if (policy.observation_contract !== undefined) validateObservationContract(policy.observation_contract, env);
  if (policy.type === "container") {
    const image = policy.image as string;
    const cells = (await fleet.connectedCells()).filter((c) => c.model === model.id && c.firmware === firmware && c.environment === environmentId(env));
    if (cells.length > 0 && !cells.some((c) => c.policyImages.includes(image))) {
      const images = [...new Set(cells.flatMap((c) => c.policyImages))];
      contract(`policy.image ${q(image)} is not available on the connected ${model.id}@${firmware} cells in ${environmentId(env)}; they can run: ${images.join(", ") || "no images"}`);
    }
  }
}

/** LeRobot units exist for the SO-101 follower only; `use_degrees` means nothing without them. */
function validateUnits(policy: CheckedPolicy, model: RobotModel): void {
  const lerobot = policy.action_space?.units === "lerobot" || policy.observation_contract?.units === "lerobot";
  if (lerobot && !LEROBOT_UNIT_MODELS.includes(model.id)) {
    const field = policy.action_space?.units === "lerobot" ? "policy.action_space.units" : "policy.observation_contract.units";
    contract(`${field} "lerobot" is for an SO-101 follower (so101) with an imported LeRobot calibration; ${model.id} takes radians (leave units out)`);
  }
  if (policy.action_space?.use_degrees !== undefined && !lerobot) {
    contract(`policy.action_space.use_degrees applies to units "lerobot" only (action_space.units or observation_contract.units); got use_degrees ${q(policy.action_space.use_degrees)} with radians`);
  }
}

function validateObservationContract(value: NonNullable<CheckedPolicy["observation_contract"]>, env: CatalogEnvironment): void {
  const cameras = cameraNames(env);
  for (const camera of value.cameras ?? []) {
    if (!cameras.includes(camera)) contract(`policy.observation_contract.cameras: ${environmentId(env)} has no camera ${q(camera)}; its cameras: ${cameras.join(", ")}`);
  }
  const instrumentKinds = new Set(env.instruments.map((i) => i.kind));
  for (const channel of value.state ?? []) {
    if (!(STATE_CHANNELS as readonly string[]).includes(channel)) {
      contract(`policy.observation_contract.state: unknown state channel ${q(channel)}; allowed: ${STATE_CHANNELS.join(", ")}`);
    }
    const instrument = STATE_INSTRUMENT[channel as (typeof STATE_CHANNELS)[number]];
    if (!instrumentKinds.has(instrument)) contract(`policy.observation_contract.state: ${environmentId(env)} has no ${instrument} instrument for ${q(channel)}`);
  }
}

/**
 * A run body's `policy` checked against the pinned robot and scene before any motor moves (spec
 * section 4: contracts `action_space` and `observation_contract` are validated at submission), and
 * a container image against what the matching connected cells can run. The policy's shape (types,
 * required and unknown fields) is coordinator/runs/run-schemas.ts `Policy`, checked before this.
 */
import type { RobotModel } from "../../firmware-pins/pins.js";
import { cameraNames, environmentId, type CatalogEnvironment } from "../catalog/environments.js";
import type { FleetView } from "../fleet/fleet-view.js";
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
  action_space?: { type: "joint_position"; dim: number };
  observation_contract?: { cameras?: string[]; state?: string[] };
}

/**
 * What a policy's declared contracts must match: the pinned robot's degrees of freedom, the
 * scene's cameras and instruments, and (container) an image the matching connected cells can run.
 * Call it on a policy whose shape has been checked (run bodies, checkpoint pushes).
 */
export function validatePolicy(value: unknown, model: RobotModel, env: CatalogEnvironment, firmware: string, fleet: FleetView): void {
  const policy = value as CheckedPolicy;
  if (policy.action_space !== undefined && policy.action_space.dim !== model.dof) {
    contract(`policy.action_space.dim must equal ${model.id}'s ${model.dof} degrees of freedom (${model.joints.join(", ")}); got ${q(policy.action_space.dim)}`);
  }
  if (policy.observation_contract !== undefined) validateObservationContract(policy.observation_contract, env);
  if (policy.type === "container") {
    const image = policy.image as string;
    const cells = fleet.connectedCells().filter((c) => c.model === model.id && c.firmware === firmware && c.environment === environmentId(env));
    if (cells.length > 0 && !cells.some((c) => c.policyImages.includes(image))) {
      const images = [...new Set(cells.flatMap((c) => c.policyImages))];
      contract(`policy.image ${q(image)} is not available on the connected ${model.id}@${firmware} cells in ${environmentId(env)}; they can run: ${images.join(", ") || "no images"}`);
    }
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

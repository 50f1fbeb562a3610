/**
 * A run body's `policy` checked against the pinned robot and scene before any motor moves (spec
 * section 4: contracts `action_space` and `observation_contract` are validated at submission), and
 * a container image against what the matching connected cells can run.
 */
import type { RobotModel } from "../../firmware-pins/pins.js";
import { cameraNames, environmentId, type CatalogEnvironment } from "../catalog/environments.js";
import type { FleetView } from "../fleet/fleet-view.js";
import { contract, isPlainObject, q, rejectUnknownKeys, requireString } from "./field-checks.js";
import { POLICY_TYPES, STATE_CHANNELS } from "./run-request.js";

/** The instrument a state channel is read from; a contract may only ask for what the scene has. */
const STATE_INSTRUMENT: Record<(typeof STATE_CHANNELS)[number], string> = {
  joint_positions: "joint_states",
  joint_velocities: "joint_states",
  gripper_state: "gripper_state",
  ft_wrist: "ft_wrist",
};

const POLICY_FIELDS: Record<(typeof POLICY_TYPES)[number], readonly string[]> = {
  container: ["type", "image", "action_space", "observation_contract"],
  checkpoint: ["type", "hf", "runtime", "inference", "action_space", "observation_contract"],
  endpoint: ["type", "url", "latency_budget_ms", "action_space", "observation_contract"],
};

export function validatePolicy(value: unknown, model: RobotModel, env: CatalogEnvironment, firmware: string, fleet: FleetView): void {
  if (!isPlainObject(value)) contract(`policy is required: an object with type ${POLICY_TYPES.join(", ")}; got ${q(value)}`);
  const type = value.type;
  if (typeof type !== "string" || !(POLICY_TYPES as readonly string[]).includes(type)) {
    contract(`policy.type must be one of ${POLICY_TYPES.join(", ")}; got ${q(type)}`);
  }
  const policyType = type as (typeof POLICY_TYPES)[number];
  rejectUnknownKeys("policy", value, POLICY_FIELDS[policyType]);
  if (policyType === "container") {
    requireString("policy.image", value.image, "a container image reference");
    if (value.action_space === undefined) contract(`policy.action_space is required for a container policy: {"type": "joint_position", "dim": ${model.dof}}`);
    if (value.observation_contract === undefined) contract(`policy.observation_contract is required for a container policy: {"cameras": [...], "state": [...]}`);
  } else if (policyType === "checkpoint") {
    requireString("policy.hf", value.hf, "a Hugging Face model reference");
    requireString("policy.runtime", value.runtime, "the runtime that loads the checkpoint");
    validateInference(value.inference);
  } else {
    const url = requireString("policy.url", value.url, "the endpoint's https:// or wss:// URL");
    let protocol = "";
    try { protocol = new URL(url).protocol; } catch { /* reported below */ }
    if (!["https:", "wss:", "http:", "ws:"].includes(protocol)) contract(`policy.url must be an http(s):// or ws(s):// URL; got ${q(url)}`);
    const budget = value.latency_budget_ms;
    if (!(typeof budget === "number" && Number.isFinite(budget) && budget > 0)) contract(`policy.latency_budget_ms is required for an endpoint policy: a positive number of milliseconds; got ${q(budget)}`);
  }
  if (value.action_space !== undefined) validateActionSpace(value.action_space, model);
  if (value.observation_contract !== undefined) validateObservationContract(value.observation_contract, env);
  if (policyType === "container") {
    const image = value.image as string;
    const cells = fleet.connectedCells().filter((c) => c.model === model.id && c.firmware === firmware && c.environment === environmentId(env));
    if (cells.length > 0 && !cells.some((c) => c.policyImages.includes(image))) {
      const images = [...new Set(cells.flatMap((c) => c.policyImages))];
      contract(`policy.image ${q(image)} is not available on the connected ${model.id}@${firmware} cells in ${environmentId(env)}; they can run: ${images.join(", ") || "no images"}`);
    }
  }
}

function validateInference(value: unknown): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) contract(`policy.inference must be an object {action_horizon, chunk_size, temp}; got ${q(value)}`);
  rejectUnknownKeys("policy.inference", value, ["action_horizon", "chunk_size", "temp"]);
  for (const field of ["action_horizon", "chunk_size"] as const) {
    const v = value[field];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) > 0)) contract(`policy.inference.${field} must be a positive integer; got ${q(v)}`);
  }
  const temp = value.temp;
  if (temp !== undefined && !(typeof temp === "number" && Number.isFinite(temp) && temp >= 0)) contract(`policy.inference.temp must be a number >= 0; got ${q(temp)}`);
}

function validateActionSpace(value: unknown, model: RobotModel): void {
  if (!isPlainObject(value)) contract(`policy.action_space must be an object {"type": "joint_position", "dim": ${model.dof}}; got ${q(value)}`);
  rejectUnknownKeys("policy.action_space", value, ["type", "dim"]);
  if (value.type !== "joint_position") contract(`policy.action_space.type must be "joint_position"; got ${q(value.type)}`);
  if (value.dim !== model.dof) {
    contract(`policy.action_space.dim must equal ${model.id}'s ${model.dof} degrees of freedom (${model.joints.join(", ")}); got ${q(value.dim)}`);
  }
}

function validateObservationContract(value: unknown, env: CatalogEnvironment): void {
  const cameras = cameraNames(env);
  if (!isPlainObject(value)) contract(`policy.observation_contract must be an object {"cameras": [...], "state": [...]}; got ${q(value)}`);
  rejectUnknownKeys("policy.observation_contract", value, ["cameras", "state"]);
  const listOf = (field: string, v: unknown): string[] => {
    if (!Array.isArray(v) || v.some((item) => typeof item !== "string")) contract(`policy.observation_contract.${field} must be an array of strings; got ${q(v)}`);
    return v as string[];
  };
  for (const camera of listOf("cameras", value.cameras ?? [])) {
    if (!cameras.includes(camera)) contract(`policy.observation_contract.cameras: ${environmentId(env)} has no camera ${q(camera)}; its cameras: ${cameras.join(", ")}`);
  }
  const instrumentKinds = new Set(env.instruments.map((i) => i.kind));
  for (const channel of listOf("state", value.state ?? [])) {
    if (!(STATE_CHANNELS as readonly string[]).includes(channel)) {
      contract(`policy.observation_contract.state: unknown state channel ${q(channel)}; allowed: ${STATE_CHANNELS.join(", ")}`);
    }
    const instrument = STATE_INSTRUMENT[channel as (typeof STATE_CHANNELS)[number]];
    if (!instrumentKinds.has(instrument)) contract(`policy.observation_contract.state: ${environmentId(env)} has no ${instrument} instrument for ${q(channel)}`);
  }
}

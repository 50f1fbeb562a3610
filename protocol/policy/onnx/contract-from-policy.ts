/**
 * A run's `policy` object as submitted (wire names: `action_space.dim`, `observation_contract`,
 * `inference.{action_horizon, chunk_size, temp}`) to the OnnxContract the check and the runtime
 * take: the one place the snake_case fields are read.
 */
import type { OnnxContract } from "./contract-check.js";

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Names listed as an array, or the keys of an object (the contract accepts both for cameras). */
function names(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (value && typeof value === "object") return Object.keys(value);
  return [];
}

/** A field's value as given; one that is not a number reaches the check as is, which names it in its message. */
const given = (value: unknown): number | undefined => (value === undefined || value === null ? undefined : (value as number));

/**
 * The contract of a checkpoint policy. `robotDof` stands in for `action_space.dim` when the policy
 * declares none. A missing `observation_contract` part counts as empty: an ONNX model is fed only
 * what the contract lists.
 */
export function onnxContractOf(policy: Record<string, unknown>, robotDof: number): OnnxContract {
  const contract = record(policy.observation_contract);
  const inference = record(policy.inference);
  const dim = record(policy.action_space).dim;
  const chunkSize = given(inference.chunk_size);
  const actionHorizon = given(inference.action_horizon);
  const temp = given(inference.temp);
  return {
    dof: typeof dim === "number" ? dim : robotDof,
    cameras: names(contract.cameras),
    state: names(contract.state),
    ...(chunkSize !== undefined ? { chunkSize } : {}),
    ...(actionHorizon !== undefined ? { actionHorizon } : {}),
    ...(temp !== undefined ? { temp } : {}),
  };
}

/**
 * Pre-flight of an endpoint policy at submission: one real exchange with the customer's server,
 * shaped exactly as the episode's will be, so a wrong URL, a server that is down, a wrong wire or
 * a wrong action size is refused in seconds instead of failing every episode on a cell.
 *
 * - openpi: connect, read the metadata, one synthetic observation through the policy's
 *   observation_map, check `actions` is [H >= 1, dof] of finite numbers (openpi/openpi-preflight.ts);
 * - json: one step-0 request over HTTP(S) POST or a WebSocket, check `{"action": [dof finite numbers]}`
 *   (json-preflight.ts).
 *
 * Throws PreflightError (preflight-error.ts). Each phase (connect, reply) gets `timeoutMs`.
 */
import { contractNamesOf, endpointSpecOf, type EndpointProtocol } from "./endpoint-spec.js";
import { preflightJson } from "./json-preflight.js";
import { preflightOpenpi } from "./openpi/openpi-preflight.js";
import { PreflightError } from "./preflight-error.js";
import { syntheticObservation } from "./synthetic-observation.js";

export { PreflightError, type PreflightFailure } from "./preflight-error.js";

export interface PreflightOptions {
  /** The robot's degrees of freedom (= policy.action_space.dim). */
  dof: number;
  /** The scene's cameras and their native sizes; the policy's contract picks among them. */
  cameras: ReadonlyArray<{ name: string; width: number; height: number }>;
  /** The scene's state channels; the policy's contract picks among them. */
  state: readonly string[];
  /** Longest wait for each phase: the connection (openpi: and its metadata), then the reply. */
  timeoutMs: number;
  /** The instruction sent as the prompt (default "pre-flight check"). */
  instruction?: string;
}

export interface PreflightResult {
  protocol: EndpointProtocol;
  /** openpi: the server's metadata (numeric arrays as lists; JSON-safe). */
  metadata?: Record<string, unknown>;
  /** Rows in the chunk the endpoint answered (json: 1). */
  actionRows: number;
  /** Request sent to reply read, ms. */
  replyMs: number;
  /** The whole pre-flight, ms (building the observation, connecting, the exchange, closing). */
  elapsedMs: number;
}

export async function preflightEndpoint(policy: Record<string, unknown>, options: PreflightOptions): Promise<PreflightResult> {
  const startedMs = performance.now();
  let spec;
  try {
    spec = endpointSpecOf(policy);
  } catch (error) {
    throw new PreflightError("invalid_policy", (error as Error).message);
  }
  const instruction = options.instruction ?? "pre-flight check";
  if (spec.protocol === "openpi") {
    const { metadata, actionRows, replyMs } = await preflightOpenpi(spec, policy, { ...options, instruction });
    return { protocol: "openpi", metadata, actionRows, replyMs, elapsedMs: performance.now() - startedMs };
  }
  const contract = contractNamesOf(policy);
  const cameras = contract.cameras ? options.cameras.filter((c) => contract.cameras!.includes(c.name)) : options.cameras;
  const observation = await syntheticObservation({ dof: options.dof, cameras, state: contract.state ?? options.state, instruction });
  const { replyMs } = await preflightJson(spec.url, observation, { dof: options.dof, timeoutMs: options.timeoutMs });
  return { protocol: "json", actionRows: 1, replyMs, elapsedMs: performance.now() - startedMs };
}

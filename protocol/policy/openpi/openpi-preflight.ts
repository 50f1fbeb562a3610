/**
 * Pre-flight of an openpi endpoint: connect and read the metadata, send one synthetic observation
 * of exactly the shape the episode's will have (grey images at the mapped sizes and layouts, zero
 * state, a prompt), and check that the reply's `actions` is [H >= 1, dof] of finite numbers.
 * The connection is closed afterwards; episodes open their own.
 */
import { contractNamesOf, type EndpointSpec } from "../endpoint-spec.js";
import { PreflightError, type PreflightFailure } from "../preflight-error.js";
import { syntheticObservation } from "../synthetic-observation.js";
import { actionRowsOf } from "./action-chunk.js";
import { buildOpenpiObservation } from "./build-observation.js";
import { NdArray } from "./msgpack-numpy.js";
import { resolveObservationMap } from "./observation-map.js";
import { OpenpiClient, OpenpiError, type OpenpiErrorKind } from "./openpi-client.js";

export interface OpenpiPreflightOptions {
  dof: number;
  cameras: ReadonlyArray<{ name: string; width: number; height: number }>;
  state: readonly string[];
  timeoutMs: number;
  instruction: string;
}

const FAILURE_OF: Record<OpenpiErrorKind, PreflightFailure> = {
  connect: "unreachable", timeout: "timeout", closed: "bad_reply", server_error: "bad_reply", protocol: "bad_reply",
};

/** The metadata as JSON can hold it: small numeric arrays as nested lists, others summarized. */
function jsonSafe(value: unknown): unknown {
  if (value instanceof NdArray) {
    if (!value.isNumeric || value.data.length > 1000) return { dtype: value.dtype, shape: [...value.shape] };
    const flat = value.toNumbers();
    const nest = (dims: readonly number[], offset: number): unknown => {
      if (dims.length === 0) return flat[offset];
      const stride = dims.slice(1).reduce((a, b) => a * b, 1);
      return Array.from({ length: dims[0] }, (_, i) => nest(dims.slice(1), offset + i * stride));
    };
    return nest(value.shape, 0);
  }
  if (value instanceof Uint8Array) return { bytes: value.length };
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  return value;
}

function preflightErrorOf(error: unknown): PreflightError {
  if (error instanceof OpenpiError) return new PreflightError(FAILURE_OF[error.kind], error.message);
  return new PreflightError("bad_reply", (error as Error).message);
}

export async function preflightOpenpi(
  spec: EndpointSpec,
  policy: Record<string, unknown>,
  options: OpenpiPreflightOptions,
): Promise<{ metadata: Record<string, unknown>; actionRows: number; replyMs: number }> {
  const contract = contractNamesOf(policy);
  let map;
  try {
    map = resolveObservationMap(spec.observationMap, { cameras: contract.cameras ?? options.cameras.map((c) => c.name), state: contract.state ?? options.state, dof: options.dof });
  } catch (error) {
    throw new PreflightError("invalid_policy", (error as Error).message);
  }
  const cameras = [...new Set(map.images.map((i) => i.camera))].map((name) => {
    const camera = options.cameras.find((c) => c.name === name);
    if (!camera) throw new PreflightError("invalid_policy", `policy.observation_map reads camera ${JSON.stringify(name)}, which this scene does not have (it has: ${options.cameras.map((c) => c.name).join(", ")})`);
    return camera;
  });
  const observation = await syntheticObservation({ dof: options.dof, cameras, state: contract.state ?? options.state, instruction: options.instruction });
  const request = await buildOpenpiObservation(observation, map);

  let client: OpenpiClient;
  try {
    client = await OpenpiClient.connect(spec.url, { timeoutMs: options.timeoutMs });
  } catch (error) {
    throw preflightErrorOf(error);
  }
  try {
    const sentMs = performance.now();
    const reply = await client.infer(request, { timeoutMs: options.timeoutMs });
    const replyMs = performance.now() - sentMs;
    const rows = actionRowsOf(reply.actions, options.dof);
    return { metadata: jsonSafe(client.metadata) as Record<string, unknown>, actionRows: rows.length, replyMs };
  } catch (error) {
    throw preflightErrorOf(error);
  } finally {
    await client.close();
  }
}

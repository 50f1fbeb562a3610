/**
 * The parts of an endpoint policy (`{type: "endpoint", protocol?, url, latency_budget_ms,
 * observation_contract?, observation_map?, inference?}`) that the agent and the pre-flight act on,
 * checked for meaning (the coordinator has checked the shape). Field names stay the wire's in
 * messages; inside, camelCase.
 */

export type EndpointProtocol = "json" | "openpi";

export interface EndpointSpec {
  protocol: EndpointProtocol;
  url: string;
  latencyBudgetMs: number;
  /** openpi: rows of each chunk to execute before asking again; undefined = the whole chunk. */
  actionHorizon?: number;
  /** openpi: `observation_map` as submitted (resolve with resolveObservationMap). */
  observationMap?: unknown;
}

/** The contract's camera and state names; undefined where the contract leaves a part out (= everything). */
export function contractNamesOf(policy: Record<string, unknown>): { cameras?: string[]; state?: string[] } {
  const raw = policy.observation_contract;
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return {};
  const names = (value: unknown) => (Array.isArray(value) ? value.map(String) : value && typeof value === "object" ? Object.keys(value) : undefined);
  const contract = raw as Record<string, unknown>;
  return { cameras: names(contract.cameras), state: names(contract.state) };
}

/** Reads and checks an endpoint policy; throws an Error naming the field and what to change. */
export function endpointSpecOf(policy: Record<string, unknown>): EndpointSpec {
  const { url, latency_budget_ms: budget } = policy;
  const protocol = policy.protocol ?? "json";
  if (protocol !== "json" && protocol !== "openpi") throw new Error(`policy.protocol must be "json" (the default) or "openpi"; got ${JSON.stringify(protocol)}`);
  if (protocol === "openpi") {
    if (typeof url !== "string" || !/^wss?:\/\//.test(url)) throw new Error(`an openpi endpoint policy needs url ws:// or wss:// (openpi serves over a WebSocket); got ${JSON.stringify(url)}`);
  } else if (typeof url !== "string" || !/^(https?|wss?):\/\//.test(url)) {
    throw new Error(`an endpoint policy needs url http(s):// or ws(s)://; got ${JSON.stringify(url)}`);
  }
  if (!(typeof budget === "number" && budget > 0)) throw new Error(`an endpoint policy needs latency_budget_ms > 0; got ${JSON.stringify(budget)}`);
  const inference = policy.inference as { action_horizon?: unknown } | undefined;
  const horizon = inference?.action_horizon;
  if (horizon !== undefined) {
    if (protocol !== "openpi") throw new Error(`policy.inference.action_horizon applies to protocol "openpi" only (a json endpoint answers one action a step)`);
    if (!Number.isInteger(horizon) || (horizon as number) < 1) throw new Error(`policy.inference.action_horizon must be an integer >= 1; got ${JSON.stringify(horizon)}`);
  }
  return {
    protocol, url, latencyBudgetMs: budget,
    ...(horizon !== undefined ? { actionHorizon: horizon as number } : {}),
    ...(protocol === "openpi" ? { observationMap: policy.observation_map } : {}),
  };
}

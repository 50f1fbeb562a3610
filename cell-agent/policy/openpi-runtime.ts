/**
 * An endpoint policy with `protocol: "openpi"`: the customer serves it as openpi and RoboArena do
 * (protocol/policy/openpi/openpi-client.ts), and the agent executes it in chunks.
 *
 * - One WebSocket per episode, opened by reset() and closed by close(): openpi servers keep state
 *   per connection.
 * - A step that has no rows left asks for a chunk: the observation goes through the policy's
 *   observation_map, the reply's `actions` [H, dof] are the next rows, and the first
 *   `inference.action_horizon` of them (default all H) are executed one per step before asking
 *   again. Steps served from a chunk send nothing.
 * - Each request's latency counts against `latency_budget_ms` in a LatencyBudget, as the JSON
 *   endpoint's steps do (so its window counts requests): a reply later than the budget is a miss
 *   (the step holds, PolicyStepMissed, and the next step asks again with a fresh observation; the
 *   late reply is dropped when it comes, after which the server answers the newer request); persistent
 *   misses end the episode (PolicyEndpointTimeout). Time spent resizing images is ours and not counted.
 * - A closed connection, a server error (openpi's traceback frame) or a reply the robot cannot
 *   execute (no `actions`, a row not `dof` long, a non-finite number) fails act() with the reason:
 *   the episode ends as a policy error.
 */
import { contractNamesOf, type EndpointSpec } from "../../protocol/policy/endpoint-spec.js";
import { actionRowsOf } from "../../protocol/policy/openpi/action-chunk.js";
import { buildOpenpiObservation } from "../../protocol/policy/openpi/build-observation.js";
import { resolveObservationMap, type ResolvedObservationMap } from "../../protocol/policy/openpi/observation-map.js";
import { OpenpiClient, OpenpiError } from "../../protocol/policy/openpi/openpi-client.js";
import type { Observation, PolicySession } from "../hardware/types.js";
import { LatencyBudget, PolicyEndpointTimeout, PolicyStepMissed } from "./latency-budget.js";

/** Every state channel a cell may have: what a contract without `state` allows. */
const ALL_STATE_CHANNELS = ["joint_positions", "joint_velocities", "gripper_state", "ft_wrist"];

export interface OpenpiSessionOptions {
  /** Longest wait for the connection and the server's metadata at the episode's start, ms (default 10000). */
  connectTimeoutMs?: number;
  /** The first inference may take this long, ms, and is not counted against the latency budget (a container's warm-up). */
  warmupMs?: number;
}

export class OpenpiSession implements PolicySession {
  private client: OpenpiClient | undefined;
  private map: ResolvedObservationMap | undefined;
  private rows: number[][] = [];
  /** The next row of `rows` to execute, and how many of them to execute before asking again. */
  private cursor = 0;
  private executeRows = 0;
  private readonly contract: { cameras?: string[]; state: string[] };
  private readonly connectTimeoutMs: number;
  private warmupMs: number | undefined;

  /**
   * Resolves the observation_map at once when the contract names its cameras (a bad map fails the
   * start); otherwise at the first step, against the cameras the observation carries.
   */
  constructor(
    private readonly spec: EndpointSpec,
    policy: Record<string, unknown>,
    private readonly budget: LatencyBudget,
    private readonly dof: number,
    options: OpenpiSessionOptions = {},
  ) {
    const names = contractNamesOf(policy);
    this.contract = { cameras: names.cameras, state: names.state ?? ALL_STATE_CHANNELS };
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.warmupMs = options.warmupMs;
    if (this.contract.cameras) this.map = this.resolve(this.contract.cameras);
  }

  private resolve(cameras: string[]): ResolvedObservationMap {
    return resolveObservationMap(this.spec.observationMap, { cameras, state: this.contract.state, dof: this.dof });
  }

  async reset(): Promise<void> {
    await this.client?.close();
    this.client = undefined;
    this.rows = [];
    this.cursor = this.executeRows = 0;
    this.client = await OpenpiClient.connect(this.spec.url, { timeoutMs: this.connectTimeoutMs });
  }

  async act(observation: Observation): Promise<number[]> {
    if (this.cursor < this.executeRows) return this.rows[this.cursor++];
    if (!this.client) throw new Error("the openpi session was not reset before its first step");
    this.map ??= this.resolve(Object.keys(observation.cameras));
    const request = await buildOpenpiObservation(observation, this.map);

    const sentMs = performance.now();
    let actions;
    let latencyMs: number;
    const warmupMs = this.warmupMs;
    if (warmupMs !== undefined) {
      // The warm-up allowance: loading and the first inference, never the policy's latency.
      this.warmupMs = undefined;
      try {
        actions = (await this.client.infer(request, { timeoutMs: warmupMs })).actions;
      } catch (error) {
        if (error instanceof OpenpiError && error.kind === "timeout") throw new Error(`the openpi server gave no first action within its warm-up allowance of ${warmupMs} ms (policies.warmupMs)`);
        throw error;
      }
      return this.take(actions);
    }
    try {
      actions = (await this.client.infer(request, { timeoutMs: this.budget.budgetMs })).actions;
      latencyMs = performance.now() - sentMs;
    } catch (error) {
      if (!(error instanceof OpenpiError && error.kind === "timeout")) throw error;
      latencyMs = Infinity;
    }
    const verdict = this.budget.record(latencyMs);
    if (verdict === "timeout") throw new PolicyEndpointTimeout(this.budget.describe());
    if (verdict === "miss" || !actions) throw new PolicyStepMissed(latencyMs, this.budget.budgetMs);
    return this.take(actions);
  }

  /** Keeps a reply's chunk and returns its first row. */
  private take(actions: Parameters<typeof actionRowsOf>[0]): number[] {
    this.rows = actionRowsOf(actions, this.dof);
    this.executeRows = Math.min(this.spec.actionHorizon ?? this.rows.length, this.rows.length);
    this.cursor = 1;
    return this.rows[0];
  }

  async close(): Promise<void> {
    await this.client?.close();
    this.client = undefined;
  }
}

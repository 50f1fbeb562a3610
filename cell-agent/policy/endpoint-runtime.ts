/**
 * Policy type `endpoint`: the customer's policy runs on their own server. `policy.protocol` picks
 * the wire:
 *
 * - "json" (the default): the agent asks for an action every control step, over HTTP(S) POST or a
 *   WebSocket (protocol/policy/json-wire.ts). A reply later than `latency_budget_ms` is a miss and
 *   that step holds position; persistent misses end the episode (see latency-budget.ts). A
 *   transport error counts as a miss.
 * - "openpi": openpi / RoboArena policy servers, action chunks over one WebSocket per episode
 *   (openpi-runtime.ts).
 */
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { endpointSpecOf } from "../../protocol/policy/endpoint-spec.js";
import { actionOf, encodeObservation } from "../../protocol/policy/json-wire.js";
import type { Observation, PolicyRuntime, PolicySession, PolicyStartContext } from "../hardware/types.js";
import { LatencyBudget, PolicyEndpointTimeout, PolicyStepMissed, type LatencyBudgetOptions } from "./latency-budget.js";
import { OpenpiSession, type OpenpiSessionOptions } from "./openpi-runtime.js";

class BudgetExceeded extends Error {}

/** One request/reply exchange per step; `close` releases the connection. */
interface Transport {
  exchange(body: Record<string, unknown>, step: number, timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

class HttpTransport implements Transport {
  constructor(private readonly url: string) {}

  async exchange(body: Record<string, unknown>, _step: number, timeoutMs: number): Promise<unknown> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new BudgetExceeded()), timeoutMs);
    try {
      const response = await fetch(this.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: abort.signal });
      if (!response.ok) throw new Error(`the policy endpoint answered HTTP ${response.status}`);
      return await response.json();
    } catch (error) {
      if (abort.signal.aborted) throw new BudgetExceeded();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {}
}

class WsTransport implements Transport {
  private socket: WebSocket | undefined;
  private opening: Promise<WebSocket> | undefined;
  private readonly waiting = new Map<number, (reply: unknown) => void>();

  constructor(private readonly url: string) {}

  private open(): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    this.opening ??= new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(this.url);
      socket.once("open", () => {
        this.socket = socket;
        resolve(socket);
      });
      socket.once("error", (error) => reject(error));
      socket.on("close", () => {
        this.socket = undefined;
        this.opening = undefined;
      });
      socket.on("message", (data) => {
        let reply: { step?: number };
        try {
          reply = JSON.parse(String(data)) as { step?: number };
        } catch {
          return;
        }
        const resolve = typeof reply.step === "number" ? this.waiting.get(reply.step) : undefined;
        if (resolve) resolve(reply);
      });
    }).catch((error) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  async exchange(body: Record<string, unknown>, step: number, timeoutMs: number): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BudgetExceeded()), timeoutMs);
    });
    try {
      return await Promise.race([
        (async () => {
          const socket = await this.open();
          const reply = new Promise<unknown>((resolve) => this.waiting.set(step, resolve));
          socket.send(JSON.stringify(body));
          return reply;
        })(),
        deadline,
      ]);
    } finally {
      clearTimeout(timer);
      this.waiting.delete(step);
    }
  }

  async close(): Promise<void> {
    this.socket?.close();
    this.socket = undefined;
  }
}

class EndpointSession implements PolicySession {
  private readonly session = randomUUID();
  private step = 0;
  private resetInfo: { seed: number; controlRateHz: number } | undefined;
  private lastError = "";

  /** `warmupMs`: the first step's reply may take this long and is not counted against the budget. */
  constructor(private readonly transport: Transport, private readonly budget: LatencyBudget, private readonly dof: number, private warmupMs?: number) {}

  async reset(info: { seed: number; instruction?: string; controlRateHz: number }): Promise<void> {
    this.step = 0;
    this.resetInfo = { seed: info.seed, controlRateHz: info.controlRateHz };
  }

  async act(observation: Observation): Promise<number[]> {
    const step = this.step++;
    const body = encodeObservation(this.session, step, observation, step === 0 ? this.resetInfo : undefined);
    const startedMs = performance.now();
    let reply: unknown;
    let latencyMs: number;
    const warmupMs = this.warmupMs;
    if (warmupMs !== undefined) {
      // The warm-up allowance: loading and the first inference, never the policy's latency.
      this.warmupMs = undefined;
      try {
        reply = await this.transport.exchange(body, step, warmupMs);
      } catch (error) {
        throw new Error(error instanceof BudgetExceeded ? `the policy gave no first action within its warm-up allowance of ${warmupMs} ms (policies.warmupMs)` : `the policy's first step failed: ${(error as Error).message}`);
      }
      return actionOf(reply, this.dof);
    }
    try {
      reply = await this.transport.exchange(body, step, this.budget.budgetMs);
      latencyMs = performance.now() - startedMs;
    } catch (error) {
      latencyMs = Infinity;
      if (!(error instanceof BudgetExceeded)) this.lastError = (error as Error).message;
    }
    const verdict = this.budget.record(latencyMs);
    if (verdict === "timeout") throw new PolicyEndpointTimeout(`${this.budget.describe()}${this.lastError ? ` (last error: ${this.lastError})` : ""}`);
    if (verdict === "miss") throw new PolicyStepMissed(latencyMs, this.budget.budgetMs);
    return actionOf(reply, this.dof);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

export interface EndpointRuntimeOptions {
  /** Overrides of the miss rules (defaults: 5 in a row, or over 20% of the last 50 steps). */
  budget?: Omit<LatencyBudgetOptions, "budgetMs">;
  /** openpi endpoints: how long an episode's start waits for the connection (default 10000 ms). */
  openpi?: OpenpiSessionOptions;
}

/** Starts endpoint policies (`type: "endpoint"` only), on the wire `policy.protocol` names. */
export class EndpointPolicyRuntime implements PolicyRuntime {
  readonly policyTypes = ["endpoint"] as const;

  constructor(private readonly options: EndpointRuntimeOptions = {}) {}

  /** Endpoint policies are not images: nothing to advertise. */
  available(): string[] {
    return [];
  }

  async start(policy: Record<string, unknown>, robot: { model: string; dof: number }, context: PolicyStartContext = {}): Promise<PolicySession> {
    const spec = endpointSpecOf(policy);
    const budget = new LatencyBudget({ ...this.options.budget, budgetMs: spec.latencyBudgetMs });
    if (spec.protocol === "openpi") return new OpenpiSession(spec, policy, budget, robot.dof, { ...this.options.openpi, ...(context.warmupMs !== undefined ? { warmupMs: context.warmupMs } : {}) });
    const transport = /^wss?:/.test(spec.url) ? new WsTransport(spec.url) : new HttpTransport(spec.url);
    return new EndpointSession(transport, budget, robot.dof, context.warmupMs);
  }
}

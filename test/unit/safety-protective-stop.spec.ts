/**
 * Protective-stop decisions: missed control periods, an endpoint policy's latency budget, and the
 * endpoint runtime against the simulated endpoint server (real HTTP and WebSocket on loopback).
 */
import assert from "node:assert/strict";
import type { Observation } from "../../cell-agent/hardware/types.js";
import { CompositePolicyRuntime } from "../../cell-agent/policy/composite-runtime.js";
import { EndpointPolicyRuntime } from "../../cell-agent/policy/endpoint-runtime.js";
import { LatencyBudget, PolicyEndpointTimeout, PolicyStepMissed } from "../../cell-agent/policy/latency-budget.js";
import { MissedPeriodMonitor, holdPosition } from "../../cell-agent/safety/protective-stop.js";
import { startEndpointPolicyServer, type EndpointPolicyServer } from "../../simulators/policies/endpoint-server.js";
import { ReferencePolicyRuntime } from "../../simulators/policies/reference-runtime.js";

const MS = 1_000_000n;

describe("safety: protective stops", () => {
  describe("MissedPeriodMonitor", () => {
    it("drops stale actions, holds after 3 late steps in a row, and recovers on an on-time step", () => {
      const m = new MissedPeriodMonitor();
      const period = 10n * MS;
      assert.deepEqual(m.step(5n * MS, period), { decision: "act", startsHold: false }, "late by less than a period: still fresh");
      assert.deepEqual(m.step(10n * MS, period), { decision: "act", startsHold: false }, "exactly one period: fresh");
      assert.deepEqual(m.step(11n * MS, period), { decision: "skip", startsHold: false });
      assert.deepEqual(m.step(25n * MS, period), { decision: "skip", startsHold: false });
      assert.deepEqual(m.step(25n * MS, period), { decision: "hold", startsHold: true });
      assert.deepEqual(m.step(40n * MS, period), { decision: "hold", startsHold: false }, "one event per streak");
      assert.equal(m.isHolding, true);
      assert.deepEqual(m.step(0n, period), { decision: "act", startsHold: false });
      assert.equal(m.isHolding, false);
      assert.deepEqual(m.step(20n * MS, period), { decision: "skip", startsHold: false }, "the streak starts over");
    });

    it("a late step between on-time ones never holds", () => {
      const m = new MissedPeriodMonitor({ limit: 3 });
      for (let i = 0; i < 20; i++) assert.notEqual(m.step(i % 2 ? 30n * MS : 0n, 10n * MS).decision, "hold");
    });

    it("holdPosition writes the measured positions as goals", async () => {
      const goals: number[][] = [];
      const bus = {
        jointNames: ["a", "b"], readFirmware: async () => "1",
        readState: async () => ({ tNs: 0n, positionRad: [0.3, -0.4], velocityRadS: [0, 0], currentA: [0, 0], temperatureC: [0, 0] }),
        writeGoalPositions: async (p: readonly number[]) => void goals.push([...p]),
        setTorque: async () => undefined,
      };
      assert.deepEqual(await holdPosition(bus), [0.3, -0.4]);
      await holdPosition(bus, [1, 2]);
      assert.deepEqual(goals, [[0.3, -0.4], [1, 2]]);
    });
  });

  describe("LatencyBudget", () => {
    it("times out after 5 misses in a row", () => {
      const b = new LatencyBudget({ budgetMs: 20 });
      assert.equal(b.record(5), "on_time");
      for (let i = 0; i < 4; i++) assert.equal(b.record(30), "miss");
      assert.equal(b.record(Infinity), "timeout");
      assert.match(b.describe(), /5 times in a row/);
    });

    it("times out when more than 20% of the last 50 steps missed, judged on a full window", () => {
      const b = new LatencyBudget({ budgetMs: 20 });
      // Every 4th step misses (25%): never 5 in a row, but over 20% once 50 steps are in.
      const verdicts: string[] = [];
      for (let i = 0; i < 60; i++) verdicts.push(b.record(i % 4 === 3 ? 25 : 10));
      const first = verdicts.indexOf("timeout");
      assert.ok(first >= 49, `no ratio verdict before the window is full (first at ${first})`);
      assert.match(b.describe(), /of the last 50 steps/);
    });

    it("10% misses never time out", () => {
      const b = new LatencyBudget({ budgetMs: 20 });
      for (let i = 0; i < 500; i++) assert.notEqual(b.record(i % 10 === 0 ? 50 : 1), "timeout");
      assert.deepEqual(b.stats(), { steps: 500, misses: 50 });
    });
  });

  describe("EndpointPolicyRuntime", function () {
    this.timeout(20_000);
    let server: EndpointPolicyServer;
    const observation: Observation = { tNs: 1_000_000_000n, cameras: {}, jointPositionsRad: [0, 0, 0, 0, 0, 0.5], instruction: "pick up the cube" };
    const policy = (url: string, budget: number) => ({ type: "endpoint", url, latency_budget_ms: budget });

    before(async () => (server = await startEndpointPolicyServer({ model: "so101" })));
    after(async () => server.close());

    for (const transport of ["http", "ws"] as const) {
      it(`acts over ${transport} within the budget, holds on a late reply, and times out when persistently late`, async () => {
        const url = transport === "http" ? server.url : server.wsUrl;
        server.delayMs = 0;
        const runtime = new CompositePolicyRuntime([new EndpointPolicyRuntime(), new ReferencePolicyRuntime()]);
        const session = await runtime.start(policy(url, 500), { model: "so101", dof: 6 });
        await session.reset({ seed: 1, instruction: "pick up the cube", controlRateHz: 10 });
        const action = await session.act(observation);
        assert.equal(action.length, 6);
        assert.ok(action.every(Number.isFinite));
        await session.close();

        server.delayMs = 60;
        const slow = await runtime.start(policy(url, 15), { model: "so101", dof: 6 });
        await slow.reset({ seed: 1, controlRateHz: 10 });
        for (let i = 0; i < 4; i++) await assert.rejects(slow.act(observation), PolicyStepMissed);
        await assert.rejects(slow.act(observation), (e: Error) => e instanceof PolicyEndpointTimeout && /5 times in a row/.test(e.message));
        await slow.close();
      });
    }

    it("sends container policies to the hardware's runtime", async () => {
      const runtime = new CompositePolicyRuntime([new EndpointPolicyRuntime(), new ReferencePolicyRuntime()]);
      assert.deepEqual(runtime.available(), ["assay/ref-policy:expert", "assay/ref-policy:novice"]);
      const session = await runtime.start({ type: "container", image: "assay/ref-policy:expert" }, { model: "so101", dof: 6 });
      await session.close();
      await assert.rejects(runtime.start({ type: "endpoint", url: "ftp://x", latency_budget_ms: 5 }, { model: "so101", dof: 6 }), /http\(s\):\/\/ or ws\(s\):\/\//);
    });
  });
});

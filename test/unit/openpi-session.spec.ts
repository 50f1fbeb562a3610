/**
 * The agent's openpi endpoint session against an openpi-protocol server on loopback
 * (test/support/openpi-server.ts): chunked execution, the latency budget per request, one
 * WebSocket per episode, the refusals, and a simulated pick-cube episode driven through the wire.
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import type { CameraFrame, Observation, PolicySession } from "../../cell-agent/hardware/types.js";
import { EndpointPolicyRuntime } from "../../cell-agent/policy/endpoint-runtime.js";
import { PolicyEndpointTimeout, PolicyStepMissed } from "../../cell-agent/policy/latency-budget.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { createSimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { eventually } from "../support/eventually.js";
import { startOpenpiServer, type OpenpiServerOptions, type OpenpiTestServer } from "../support/openpi-server.js";

const ROBOT = { model: "so101", dof: 6 };

function openpiPolicy(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "endpoint", protocol: "openpi", url, latency_budget_ms: 1000,
    action_space: { type: "joint_position", dim: 6 },
    observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
    observation_map: { preset: "droid", gripper: null },
    ...extra,
  };
}

async function greyFrame(width: number, height: number): Promise<CameraFrame> {
  const jpeg = await sharp({ create: { width, height, channels: 3, background: { r: 128, g: 128, b: 128 } } }).jpeg().toBuffer();
  return { tNs: 0n, width, height, jpeg: new Uint8Array(jpeg) };
}

describe("openpi endpoint session", function () {
  this.timeout(30_000);
  let observation: Observation;
  const servers: OpenpiTestServer[] = [];
  const sessions: PolicySession[] = [];

  before(async () => {
    observation = { tNs: 0n, jointPositionsRad: [0, 0, 0, 0, 0, 1], cameras: { top: await greyFrame(640, 480), wrist: await greyFrame(320, 240) }, instruction: "pick up the red cube" };
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function serve(options: OpenpiServerOptions): Promise<OpenpiTestServer> {
    const server = await startOpenpiServer(options);
    servers.push(server);
    return server;
  }

  async function session(policy: Record<string, unknown>, budget?: { maxConsecutiveMisses?: number }): Promise<PolicySession> {
    const started = await new EndpointPolicyRuntime({ budget }).start(policy, ROBOT);
    sessions.push(started);
    await started.reset({ seed: 1, instruction: "pick up the red cube", controlRateHz: 30 });
    return started;
  }

  it("executes action_horizon 3 rows of each 5-row chunk: a request every 3 steps", async () => {
    const server = await serve({ chunk: 5 });
    const policy = await session(openpiPolicy(server.url, { inference: { action_horizon: 3 } }));
    const asked: number[] = [];
    for (let step = 0; step < 9; step++) {
      const row = await policy.act(observation);
      assert.equal(row.length, 6);
      asked.push(server.requests);
    }
    assert.deepEqual(asked, [1, 1, 1, 2, 2, 2, 3, 3, 3]);
  });

  it("without action_horizon executes the whole chunk before asking again", async () => {
    const server = await serve({ chunk: 5 });
    const policy = await session(openpiPolicy(server.url));
    const asked: number[] = [];
    for (let step = 0; step < 7; step++) {
      await policy.act(observation);
      asked.push(server.requests);
    }
    assert.deepEqual(asked, [1, 1, 1, 1, 1, 2, 2]);
  });

  it("a reply later than latency_budget_ms is a miss; the late chunk is dropped and the next step asks afresh", async () => {
    // An instant server: the replies' latencies are the delay and the wire's, not the expert's image work in this
    // process (which, on a loaded machine, took the on-time reply past the 100 ms budget).
    const server = await serve({ chunk: 5, delayMs: 300, instant: true });
    const policy = await session(openpiPolicy(server.url, { latency_budget_ms: 100 }));
    await assert.rejects(policy.act(observation), (error: unknown) => error instanceof PolicyStepMissed && error.budgetMs === 100);
    server.delayMs = 0;
    await eventually("the late reply", () => server.requests === 1, { deadlineMs: 5000 });
    assert.deepEqual(await policy.act(observation), [2, 2, 2, 2, 2, 2], "the step after the miss executes the second reply's chunk, not the late first one");
    assert.equal(server.requests, 2, "the step after a miss sent a new request");
  });

  it("persistent misses end the episode with PolicyEndpointTimeout", async () => {
    const server = await serve({ chunk: 5, delayMs: 2000 });
    const policy = await session(openpiPolicy(server.url, { latency_budget_ms: 20 }), { maxConsecutiveMisses: 3 });
    await assert.rejects(policy.act(observation), PolicyStepMissed);
    await assert.rejects(policy.act(observation), PolicyStepMissed);
    await assert.rejects(policy.act(observation), (error: unknown) => error instanceof PolicyEndpointTimeout && /missed its latency_budget_ms of 20 ms 3 times in a row/.test(error.message));
  });

  it("refuses a chunk whose rows are not dof long, in plain words", async () => {
    const server = await serve({ chunk: 5, actionDim: 7 });
    const policy = await session(openpiPolicy(server.url));
    await assert.rejects(policy.act(observation), /the endpoint answered actions of shape \[5, 7\]; policy\.action_space\.dim is 6/);
  });

  it("a server error (openpi's traceback frame) fails the step with the server's words, not as a miss", async () => {
    const server = await serve({ chunk: 1, errorOnRequest: 2 });
    const policy = await session(openpiPolicy(server.url));
    await policy.act(observation);
    await assert.rejects(policy.act(observation), (error: Error) => !(error instanceof PolicyStepMissed) && /the policy server reported an error: Traceback[\s\S]*ValueError: test failure/.test(error.message));
  });

  it("opens one WebSocket per episode", async () => {
    const server = await serve({ chunk: 2 });
    const policy = await session(openpiPolicy(server.url));
    await policy.act(observation);
    await policy.reset({ seed: 2, controlRateHz: 30 });
    await policy.act(observation);
    assert.equal(server.connections, 2);
  });

  it("an episode does not start against a refused connection, a server that closes, or a map the contract cannot feed", async () => {
    const gone = await startOpenpiServer();
    const url = gone.url;
    await gone.close();
    const refused = await new EndpointPolicyRuntime().start(openpiPolicy(url), ROBOT);
    await assert.rejects(refused.reset({ seed: 1, controlRateHz: 30 }), new RegExp(`could not connect to ${url.replace(/[/.]/g, "\\$&")}: connection refused`));

    const closing = await serve({ closeOnConnect: true });
    const closed = await new EndpointPolicyRuntime().start(openpiPolicy(closing.url), ROBOT);
    await assert.rejects(closed.reset({ seed: 1, controlRateHz: 30 }), /the policy server closed the connection \(code 1011: not serving\) before sending its metadata/);

    await assert.rejects(
      new EndpointPolicyRuntime().start(openpiPolicy(closing.url, { observation_map: { preset: "droid" } }), ROBOT),
      /policy\.observation_map\.gripper: the droid preset sends the gripper opening/,
    );
  });

  it("drives a simulated pick-cube episode to success through the openpi wire (DROID keys, 224x224 padded, chunks of 10, horizon 8)", async () => {
    const seed = 7100;
    const server = await serve({ chunk: 10, rowsPerRequest: 8 });
    const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed, speed: Infinity });
    try {
      const plan = realizeEpisodePlan({ task: pickCubeTask(), perturbation: { layoutJitterMm: 10, lighting: ["nominal"], distractors: "none" }, seed, dof: 6, environment: "tabletop@1" });
      await cell.scene.reset(plan.reset);
      const policy = await session(openpiPolicy(server.url, { latency_budget_ms: 2000, inference: { action_horizon: 8 } }));
      const periodNs = 1_000_000_000n / 30n;
      const start = cell.clock.nowNs();
      let next = start;
      let liftedSince: bigint | undefined;
      let steps = 0;
      let success = false;
      while (!success && next - start < 12_000_000_000n) {
        const cameras: Record<string, CameraFrame> = {};
        for (const camera of cell.cameras) cameras[camera.name] = await camera.capture();
        const joints = await cell.motors.readState();
        await cell.motors.writeGoalPositions(await policy.act({ tNs: cell.clock.nowNs(), jointPositionsRad: joints.positionRad, cameras, instruction: plan.instruction }));
        steps += 1;
        next += periodNs;
        await cell.clock.sleepUntil(next);
        const cube = (await cell.mocap!.readPoses()).poses.find((p) => p.name === "cube")!;
        if (cube.positionM[2] > 0.06) {
          liftedSince ??= next;
          success = next - liftedSince >= 1_000_000_000n;
        } else {
          liftedSince = undefined;
        }
      }
      assert.ok(success, `the cube was not held above 6 cm for 1 s within 12 s (${steps} steps)`);
      assert.ok(steps > 100, `${steps} steps`);
      assert.equal(server.requests, Math.ceil(steps / 8), "one request per 8 steps");
      const request = server.lastRequest!;
      assert.deepEqual([...request.keys()].sort(), ["observation/exterior_image_1_left", "observation/joint_position", "observation/wrist_image_left", "prompt"]);
    } finally {
      await cell.close();
    }
  });
});

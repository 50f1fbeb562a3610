/**
 * Endpoint pre-flight at submission, for both wires, against real servers on loopback: the openpi
 * test server (test/support/openpi-server.ts) and the simulated JSON endpoint
 * (simulators/policies/endpoint-server.ts). Each refusal's message is checked word for word.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Packr } from "msgpackr";
import { WebSocketServer } from "ws";
import { preflightEndpoint, PreflightError, type PreflightFailure, type PreflightOptions } from "../../protocol/policy/endpoint-preflight.js";
import { startEndpointPolicyServer, type EndpointPolicyServer } from "../../simulators/policies/endpoint-server.js";
import { ndarray, startOpenpiServer, type OpenpiServerOptions, type OpenpiTestServer } from "../support/openpi-server.js";

const OPTIONS: PreflightOptions = {
  dof: 6,
  cameras: [{ name: "top", width: 640, height: 480 }, { name: "wrist", width: 320, height: 240 }],
  state: ["joint_positions", "joint_velocities", "gripper_state"],
  timeoutMs: 5000,
  instruction: "pick up the red cube",
};

function openpiPolicy(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "endpoint", protocol: "openpi", url, latency_budget_ms: 200,
    action_space: { type: "joint_position", dim: 6 },
    observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"] },
    observation_map: { preset: "droid" },
    ...extra,
  };
}

async function refusal(policy: Record<string, unknown>, options: PreflightOptions = OPTIONS): Promise<{ failure: PreflightFailure; message: string }> {
  try {
    await preflightEndpoint(policy, options);
  } catch (error) {
    assert.ok(error instanceof PreflightError, `expected a PreflightError, got ${String(error)}`);
    return { failure: error.failure, message: error.message };
  }
  assert.fail("the pre-flight passed");
}

/** A loopback URL nothing listens on: a server's, after it closed. */
async function deadUrl(scheme: "ws" | "http"): Promise<string> {
  const server = await startEndpointPolicyServer({ model: "so101" });
  await server.close();
  return scheme === "ws" ? server.wsUrl : server.url;
}

describe("endpoint pre-flight", function () {
  this.timeout(20_000);
  const closers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c.close()));
  });
  async function openpi(options: OpenpiServerOptions = {}): Promise<OpenpiTestServer> {
    const server = await startOpenpiServer(options);
    closers.push(server);
    return server;
  }
  async function json(delayMs = 0): Promise<EndpointPolicyServer> {
    const server = await startEndpointPolicyServer({ model: "so101", delayMs });
    closers.push(server);
    return server;
  }

  describe("openpi", () => {
    it("passes a server that answers a [10, 6] chunk, returning its metadata, and sent exactly the episode's shapes", async () => {
      const pose = new Float32Array([0, 0.5, -0.5, 0, 0, 1]);
      const server = await openpi({ chunk: 10, metadata: { name: "pi0-droid", reset_pose: ndarray("<f4", [6], new Uint8Array(pose.buffer)) } });
      const result = await preflightEndpoint(openpiPolicy(server.url), OPTIONS);
      assert.equal(result.protocol, "openpi");
      assert.equal(result.actionRows, 10);
      assert.deepEqual(result.metadata, { name: "pi0-droid", reset_pose: [...pose] });
      assert.ok(result.elapsedMs >= result.replyMs && result.replyMs > 0);

      const request = server.lastRequest!;
      const shape = (key: string) => {
        const array = request.get(key) as { dtype: string; shape: number[] };
        return [array.dtype, array.shape];
      };
      assert.deepEqual(shape("observation/exterior_image_1_left"), ["|u1", [224, 224, 3]]);
      assert.deepEqual(shape("observation/wrist_image_left"), ["|u1", [224, 224, 3]]);
      assert.deepEqual(shape("observation/joint_position"), ["<f4", [6]]);
      assert.deepEqual(shape("observation/gripper_position"), ["<f4", [1]]);
      assert.equal(request.get("prompt"), "pick up the red cube");
    });

    it("refuses an unreachable server", async () => {
      const url = await deadUrl("ws");
      assert.deepEqual(await refusal(openpiPolicy(url)), { failure: "unreachable", message: `could not connect to ${url}: connection refused` });
    });

    it("refuses actions of the wrong shape", async () => {
      const server = await openpi({ chunk: 10, actionDim: 7 });
      assert.deepEqual(await refusal(openpiPolicy(server.url)), { failure: "bad_reply", message: "the endpoint answered actions of shape [10, 7]; policy.action_space.dim is 6" });
    });

    it("refuses a server that does not reply in time", async () => {
      const server = await openpi({ delayMs: 3000 });
      assert.deepEqual(await refusal(openpiPolicy(server.url), { ...OPTIONS, timeoutMs: 300 }), { failure: "timeout", message: "no reply within 300 ms" });
    });

    it("refuses a server that closes before its metadata, and one that fails on the request", async () => {
      const closing = await openpi({ closeOnConnect: true });
      const closed = await refusal(openpiPolicy(closing.url));
      assert.equal(closed.failure, "bad_reply");
      assert.equal(closed.message, `connected to ${closing.url}, but the policy server closed the connection (code 1011: not serving) before sending its metadata`);

      const failing = await openpi({ errorOnRequest: 1 });
      const failed = await refusal(openpiPolicy(failing.url));
      assert.equal(failed.failure, "bad_reply");
      assert.match(failed.message, /^the policy server reported an error: Traceback[\s\S]*ValueError: test failure$/);
    });

    it("refuses an HTTP server that is not a WebSocket, and replies that are not MessagePack or lack actions", async () => {
      const http = createServer((_req, res) => res.writeHead(404).end("not here"));
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
      closers.push({ close: () => new Promise<void>((resolve) => http.close(() => resolve())) });
      const httpUrl = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/`;
      assert.deepEqual(await refusal(openpiPolicy(httpUrl)), { failure: "unreachable", message: `could not connect to ${httpUrl}: the server answered HTTP 404 instead of opening a WebSocket` });

      const replies = [Buffer.from('{"actions": [[0, 0, 0, 0, 0, 0]]}'), new Packr({ useRecords: false }).pack({ action: [0, 0, 0, 0, 0, 0] })];
      const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
      await new Promise((resolve) => wss.once("listening", resolve));
      closers.push({ close: () => new Promise<void>((resolve) => wss.close(() => resolve())) });
      wss.on("connection", (socket) => {
        socket.send(new Packr({ useRecords: false }).pack({}));
        socket.on("message", () => socket.send(replies.shift()!));
      });
      const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
      assert.deepEqual(await refusal(openpiPolicy(url)), {
        failure: "bad_reply", message: `the policy server's reply is not MessagePack (it looks like JSON: {"actions": [[0, 0, 0, 0, 0, 0]]})`,
      });
      assert.deepEqual(await refusal(openpiPolicy(url)), { failure: "bad_reply", message: `the policy server's reply has no "actions" (its keys: action)` });
      for (const client of wss.clients) client.terminate();
    });

    it("refuses a policy whose observation_map the scene cannot feed, before connecting", async () => {
      const url = await deadUrl("ws");
      const bad = await refusal(openpiPolicy(url, { observation_contract: { cameras: ["top"], state: ["joint_positions", "gripper_state"] } }));
      assert.equal(bad.failure, "invalid_policy");
      assert.match(bad.message, /^policy\.observation_map\.preset: the droid preset sends "observation\/wrist_image_left" from a "wrist" camera/);
      assert.deepEqual(await refusal(openpiPolicy("http://127.0.0.1:1/")), {
        failure: "invalid_policy", message: `an openpi endpoint policy needs url ws:// or wss:// (openpi serves over a WebSocket); got "http://127.0.0.1:1/"`,
      });
    });
  });

  describe("json", () => {
    const jsonPolicy = (url: string) => ({ type: "endpoint", url, latency_budget_ms: 200, observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] } });

    it("passes an endpoint that answers one action over HTTP POST and over a WebSocket", async () => {
      const server = await json();
      for (const url of [server.url, server.wsUrl]) {
        const result = await preflightEndpoint(jsonPolicy(url), OPTIONS);
        assert.deepEqual([result.protocol, result.actionRows, result.metadata], ["json", 1, undefined]);
      }
      assert.equal(server.steps, 2);
    });

    it("refuses an action of the wrong size, an unreachable endpoint, and a late one", async () => {
      const server = await json();
      const wrong = await refusal(jsonPolicy(server.url), { ...OPTIONS, dof: 7 });
      assert.equal(wrong.failure, "bad_reply");
      assert.equal(wrong.message, `the policy endpoint must answer {"action": [7 finite numbers]}; "action" has 6 entries; the robot has 7 degrees of freedom`);

      const url = await deadUrl("http");
      assert.deepEqual(await refusal(jsonPolicy(url)), { failure: "unreachable", message: `could not connect to ${url}: connection refused` });

      const slow = await json(1000);
      assert.deepEqual(await refusal(jsonPolicy(slow.url), { ...OPTIONS, timeoutMs: 300 }), { failure: "timeout", message: `no reply within 300 ms from ${slow.url}` });
      assert.deepEqual(await refusal(jsonPolicy(slow.wsUrl), { ...OPTIONS, timeoutMs: 300 }), { failure: "timeout", message: `no reply within 300 ms from ${slow.wsUrl}` });
    });

    it("never repeats what a URL answered: a status and a size, not the body (the coordinator's network stays unreadable)", async () => {
      const secret = "AccessKeyId=AKIAEXAMPLESECRET";
      const server = createServer((request, response) => {
        request.resume();
        const path = request.url ?? "/";
        if (path === "/error") response.writeHead(500, { "content-type": "text/plain" }).end(secret);
        else if (path === "/html") response.writeHead(200, { "content-type": "text/html" }).end(`<p>${secret}</p>`);
        else if (path === "/json") response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ Code: "Success", Token: secret }));
        else response.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(2 * 1024 * 1024, 65));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      closers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const error = await refusal(jsonPolicy(`${base}/error`));
      assert.equal(error.message, `the endpoint answered HTTP 500 (${secret.length} bytes of text/plain; not shown, a pre-flight never repeats what a URL answered)`);
      const html = await refusal(jsonPolicy(`${base}/html`));
      assert.match(html.message, /^the endpoint's reply is not JSON \(\d+ bytes of text\/html; not shown/);
      const other = await refusal(jsonPolicy(`${base}/json`));
      assert.equal(other.message, `the policy endpoint must answer {"action": [6 finite numbers]}; the reply has no "action" (it has 2 other keys)`);
      const huge = await refusal(jsonPolicy(`${base}/huge`));
      assert.match(huge.message, /answered more than 1048576 bytes/);
      for (const refused of [error, html, other, huge]) assert.ok(!refused.message.includes(secret) && !refused.message.includes("AKIA"), refused.message);
    });
  });
});

/**
 * A simulated remote policy endpoint for tests and demos: the expert reference policy behind the
 * endpoint wire of cell-agent/policy/endpoint-runtime.ts, over HTTP POST (any path) and WebSocket
 * (same port). `delayMs` adds latency to every reply, and can be changed while running, to play a
 * slow or overloaded customer server. `jumpRad` throws the arm's base joint that far to one side and
 * then the other on alternate steps, to play a policy that jumps (the safety envelope's test).
 *
 *   const server = await startEndpointPolicyServer({ model: "so101", delayMs: 0 });
 *   policy = { type: "endpoint", url: server.url, latency_budget_ms: 50 }
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { CameraFrame, Observation, PolicySession } from "../../cell-agent/hardware/types.js";
import { embodimentFor } from "../world/embodiments.js";
import { ExpertPolicy } from "./expert-policy.js";

export interface EndpointServerOptions {
  /** Catalog robot model the expert drives, e.g. "so101". */
  model: string;
  /** Extra latency added to every reply, ms (default 0). */
  delayMs?: number;
  /** Added to the base joint's target, alternating in sign every step, rad (default 0). */
  jumpRad?: number;
  /** Loopback port (default 0: any free port). */
  port?: number;
  /** Loopback address to listen on (default "127.0.0.1"; the fake container engine gives each container its own 127.x address). */
  host?: string;
  /** Answer the between-episodes `{"type": "reset"}` with `{"reset": "ok"}` (default true; false plays an older server). */
  answersReset?: boolean;
}

export interface EndpointPolicyServer {
  /** http://127.0.0.1:<port>/act */
  url: string;
  /** ws://127.0.0.1:<port>/act */
  wsUrl: string;
  /** Current extra latency, ms; assign to change it. */
  delayMs: number;
  /** Current jump, rad; assign to change it. */
  jumpRad: number;
  /** Steps answered so far. */
  readonly steps: number;
  /** Reset messages answered so far. */
  readonly resets: number;
  close(): Promise<void>;
}

/** Between episodes on a warm container: forget every episode. */
interface ResetRequest {
  type: "reset";
}

interface StepRequest {
  session: string;
  step: number;
  t: number;
  instruction?: string;
  joint_positions?: number[];
  joint_velocities?: number[];
  gripper_opening?: number;
  cameras?: Record<string, { jpeg_b64: string; width: number; height: number }>;
  reset?: { seed: number; control_rate_hz: number };
}

function observationOf(request: StepRequest): Observation {
  const tNs = BigInt(Math.round(request.t * 1e9));
  const cameras: Record<string, CameraFrame> = {};
  for (const [name, frame] of Object.entries(request.cameras ?? {})) {
    cameras[name] = { tNs, width: frame.width, height: frame.height, jpeg: new Uint8Array(Buffer.from(frame.jpeg_b64, "base64")) };
  }
  return {
    tNs, cameras, instruction: request.instruction, jointPositionsRad: request.joint_positions,
    jointVelocitiesRadS: request.joint_velocities, gripperOpening: request.gripper_opening,
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startEndpointPolicyServer(options: EndpointServerOptions): Promise<EndpointPolicyServer> {
  const embodiment = embodimentFor(options.model);
  const sessions = new Map<string, PolicySession>();
  let steps = 0;
  let resets = 0;
  const state = { delayMs: options.delayMs ?? 0, jumpRad: options.jumpRad ?? 0 };

  const answer = async (request: StepRequest | ResetRequest): Promise<{ step: number; action: number[] } | { reset: "ok" }> => {
    if ("type" in request && request.type === "reset" && options.answersReset !== false) {
      // Between episodes on a warm container: forget every episode (protocol/policy/json-wire.ts).
      sessions.clear();
      resets += 1;
      return { reset: "ok" };
    }
    if ("type" in request) throw new Error(`unknown message type ${JSON.stringify(request.type)}`);
    let policy = sessions.get(request.session);
    if (!policy || request.reset) {
      policy = new ExpertPolicy(embodiment);
      sessions.set(request.session, policy);
      await policy.reset({ seed: request.reset?.seed ?? 0, instruction: request.instruction, controlRateHz: request.reset?.control_rate_hz ?? 10 });
    }
    const action = await policy.act(observationOf(request));
    if (state.jumpRad !== 0) action[embodiment.armJoints[0]] += request.step % 2 === 0 ? state.jumpRad : -state.jumpRad;
    if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    steps += 1;
    return { step: request.step, action };
  };

  const http = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { "content-type": "application/json" }).end(JSON.stringify({ error: "POST an observation as JSON" }));
      return;
    }
    readBody(req)
      .then((body) => answer(JSON.parse(body) as StepRequest))
      .then((reply) => {
        if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      })
      .catch((error: Error) => {
        if (!res.destroyed) res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: error.message }));
      });
  });
  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (socket) => {
    socket.on("message", (data) => {
      answer(JSON.parse(String(data)) as StepRequest)
        .then((reply) => socket.send(JSON.stringify(reply)))
        .catch((error: Error) => socket.send(JSON.stringify({ error: error.message })));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/act`,
    wsUrl: `ws://127.0.0.1:${port}/act`,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    get jumpRad() {
      return state.jumpRad;
    },
    set jumpRad(value: number) {
      state.jumpRad = value;
    },
    get steps() {
      return steps;
    },
    get resets() {
      return resets;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * A policy server that speaks openpi's WebSocket protocol, written for the tests from the
 * protocol's description (openpi's websocket_policy_server.py and msgpack_numpy.py), with msgpackr
 * and ws and none of our codec: on connect it sends its metadata; then each binary frame is an
 * observation map and each reply `{actions: ndarray [chunk, dim] <f4, server_timing: {infer_ms}}`.
 * NumPy arrays are maps with bin keys `__ndarray__`, `data`, `dtype`, `shape`.
 *
 * Behind it is the simulated expert policy, one per connection (an episode), shown what the
 * request carries: the images are scaled back to the cameras' native sizes (undoing the padding
 * of openpi's resize_with_pad when `resize` is "pad") and JPEG-encoded as a camera would, the state
 * becomes the joint positions, and the time is the request count times `rowsPerRequest` control
 * periods. Each reply repeats the expert's target `chunk` times.
 */
import type { AddressInfo } from "node:net";
import { Packr, Unpackr } from "msgpackr";
import sharp from "sharp";
import { WebSocketServer, type WebSocket } from "ws";
import type { CameraFrame, Observation } from "../../cell-agent/hardware/types.js";
import { ExpertPolicy } from "../../simulators/policies/expert-policy.js";
import { embodimentFor } from "../../simulators/world/embodiments.js";

type KeyPath = string[];

export interface OpenpiServerOptions {
  /** Catalog robot model the expert drives (default "so101"). */
  model?: string;
  /** Rows per reply (default 10). */
  chunk?: number;
  /** Rows the client executes per request: the server's clock advances by that many periods a request (default `chunk`). */
  rowsPerRequest?: number;
  /** Control rate of the client, Hz (default 30). */
  controlRateHz?: number;
  /** Extra latency added to every reply, ms (default 0); changeable while running. */
  delayMs?: number;
  /**
   * Answer at once, without decoding the images or running the expert: every number of the n-th
   * reply on a connection is n, so a test can tell which request a chunk answers. A server whose own
   * work takes no time: a reply's latency is `delayMs` and the wire's, and a test of the latency
   * budget measures the budget, not this process's image work.
   */
  instant?: boolean;
  /** Length of each action row (default: the robot's dof); set another to play a wrong server. */
  actionDim?: number;
  /** Sent on connect (default {}). */
  metadata?: Record<string, unknown>;
  /** Close each connection at once, before the metadata. */
  closeOnConnect?: boolean;
  /** Answer the n-th request of a connection (1-based) with a traceback text frame and close 1011, as openpi does on an exception. */
  errorOnRequest?: number;
  /** Where the request carries what (default: the DROID keys). */
  keys?: { images: Record<string, KeyPath>; state?: KeyPath; prompt?: KeyPath };
  /** How the client resized the images (default "pad", as openpi's resize_with_pad). */
  resize?: "pad" | "stretch";
  /** The cameras' native sizes the expert expects (default top 640x480, wrist 320x240). */
  nativeSizes?: Record<string, { width: number; height: number }>;
  /** Loopback port (default 0: any free port). */
  port?: number;
  /** Loopback address to listen on (default "127.0.0.1"). */
  host?: string;
}

export interface OpenpiTestServer {
  /** ws://127.0.0.1:<port>/ */
  url: string;
  delayMs: number;
  /** Requests answered so far, over all connections. */
  readonly requests: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** The last request as decoded (bin keys as strings, arrays as {dtype, shape, data}). */
  readonly lastRequest: Map<string, unknown> | undefined;
  close(): Promise<void>;
}

export const DROID_KEYS = {
  images: { top: ["observation/exterior_image_1_left"], wrist: ["observation/wrist_image_left"] },
  state: ["observation/joint_position"],
  prompt: ["prompt"],
};

interface Array3 {
  dtype: string;
  shape: number[];
  data: Buffer;
}

const packr = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });

/** Map keys arrive as str or, for the ndarray markers, bin: compare as text. */
function keyText(key: unknown): string {
  return Buffer.isBuffer(key) || key instanceof Uint8Array ? Buffer.from(key).toString("utf8") : String(key);
}

function textKeyed(value: unknown): unknown {
  if (value instanceof Map) {
    const out = new Map<string, unknown>();
    for (const [k, v] of value) out.set(keyText(k), textKeyed(v));
    if (out.get("__ndarray__") === true) return { dtype: out.get("dtype"), shape: out.get("shape"), data: out.get("data") } as Array3;
    return out;
  }
  if (Array.isArray(value)) return value.map(textKeyed);
  return value;
}

function at(map: Map<string, unknown>, path: KeyPath): unknown {
  let node: unknown = map;
  for (const key of path) node = node instanceof Map ? node.get(key) : undefined;
  return node;
}

/** A little-endian float array's elements (the state is <f4 from our client; <f8 from openpi's examples). */
function floats(array: Array3): number[] {
  const bytes = new Uint8Array(array.data); // a copy: aligned
  if (array.dtype === "<f4") return Array.from(new Float32Array(bytes.buffer));
  if (array.dtype === "<f8") return Array.from(new Float64Array(bytes.buffer));
  throw new Error(`the state must be <f4 or <f8; got ${array.dtype}`);
}

/** A numpy array as msgpack_numpy packs it (bin keys), for msgpackr to pack; usable in `metadata`. */
export function ndarray(dtype: string, shape: number[], data: Uint8Array): Map<Buffer, unknown> {
  return new Map<Buffer, unknown>([
    [Buffer.from("__ndarray__"), true],
    [Buffer.from("data"), Buffer.from(data)],
    [Buffer.from("dtype"), dtype],
    [Buffer.from("shape"), shape],
  ]);
}

/** An HWC or CHW uint8 image back at the camera's native size, as the camera's JPEG. */
async function nativeFrame(image: Array3, native: { width: number; height: number }, resize: "pad" | "stretch", tNs: bigint): Promise<CameraFrame> {
  if (image.dtype !== "|u1" || image.shape.length !== 3) throw new Error(`an image must be uint8 with 3 dimensions; got ${image.dtype} ${JSON.stringify(image.shape)}`);
  const chw = image.shape[0] === 3 && image.shape[2] !== 3;
  const [height, width] = chw ? [image.shape[1], image.shape[2]] : [image.shape[0], image.shape[1]];
  let hwc = image.data;
  if (chw) {
    hwc = Buffer.alloc(width * height * 3);
    for (let p = 0; p < width * height; p++) for (let c = 0; c < 3; c++) hwc[p * 3 + c] = image.data[c * width * height + p];
  }
  let picture = sharp(hwc, { raw: { width, height, channels: 3 } });
  if (resize === "pad" && (width !== native.width || height !== native.height)) {
    // resize_with_pad: scaled by the larger ratio, sides floored, centred with floored offsets.
    const ratio = Math.max(native.width / width, native.height / height);
    const [w, h] = [Math.floor(native.width / ratio), Math.floor(native.height / ratio)];
    picture = sharp(await picture.extract({ left: Math.floor((width - w) / 2), top: Math.floor((height - h) / 2), width: w, height: h }).raw().toBuffer(), { raw: { width: w, height: h, channels: 3 } });
  }
  const jpeg = await picture.resize(native.width, native.height, { fit: "fill" }).jpeg({ quality: 80 }).toBuffer();
  return { tNs, width: native.width, height: native.height, jpeg: new Uint8Array(jpeg) };
}

export async function startOpenpiServer(options: OpenpiServerOptions = {}): Promise<OpenpiTestServer> {
  const embodiment = embodimentFor(options.model ?? "so101");
  const chunk = options.chunk ?? 10;
  const rowsPerRequest = options.rowsPerRequest ?? chunk;
  const periodNs = BigInt(Math.round(1e9 / (options.controlRateHz ?? 30)));
  const keys = options.keys ?? DROID_KEYS;
  const natives = options.nativeSizes ?? { top: { width: 640, height: 480 }, wrist: { width: 320, height: 240 } };
  const state = { delayMs: options.delayMs ?? 0, requests: 0, connections: 0, lastRequest: undefined as Map<string, unknown> | undefined };
  /** Replies held back by `delayMs`; dropped at close so no timer outlives the server. */
  const delays = new Set<NodeJS.Timeout>();
  const delay = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      delays.delete(timer);
      resolve();
    }, ms);
    delays.add(timer);
  });

  const wss = new WebSocketServer({ host: options.host ?? "127.0.0.1", port: options.port ?? 0, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    wss.once("listening", resolve);
    wss.once("error", reject);
  });

  wss.on("connection", (socket: WebSocket) => {
    state.connections += 1;
    if (options.closeOnConnect) {
      socket.close(1011, "not serving");
      return;
    }
    const expert = new ExpertPolicy(embodiment);
    let requestsHere = 0;
    // Requests are answered one at a time, in order, as openpi's handler loop does.
    let queue: Promise<void> = expert.reset();
    socket.send(packr.pack(options.metadata ?? {}));
    /** The expert's action for the request's observation, in every row of the chunk. */
    const expertRows = async (request: Map<string, unknown>, rows: Float32Array, dim: number): Promise<void> => {
      const tNs = BigInt(requestsHere - 1) * BigInt(rowsPerRequest) * periodNs;
      const cameras: Record<string, CameraFrame> = {};
      for (const [camera, path] of Object.entries(keys.images)) {
        const image = at(request, path) as Array3 | undefined;
        if (image) cameras[camera] = await nativeFrame(image, natives[camera], options.resize ?? "pad", tNs);
      }
      const joints = keys.state ? (at(request, keys.state) as Array3 | undefined) : undefined;
      const observation: Observation = {
        tNs, cameras,
        ...(joints ? { jointPositionsRad: floats(joints) } : {}),
        ...(keys.prompt && typeof at(request, keys.prompt) === "string" ? { instruction: at(request, keys.prompt) as string } : {}),
      };
      const target = await expert.act(observation);
      for (let r = 0; r < rows.length / dim; r++) for (let j = 0; j < dim; j++) rows[r * dim + j] = target[j] ?? 0;
    };
    socket.on("message", (data: Buffer) => {
      queue = queue.then(async () => {
        requestsHere += 1;
        if (options.errorOnRequest === requestsHere) {
          socket.send("Traceback (most recent call last):\n  File \"policy.py\", line 1, in infer\nValueError: test failure");
          socket.close(1011, "Internal server error. Traceback included in previous frame.");
          return;
        }
        const startedMs = performance.now();
        const request = textKeyed(unpackr.unpack(data)) as Map<string, unknown>;
        state.lastRequest = request;
        const dim = options.actionDim ?? embodiment.dof;
        const rows = new Float32Array(chunk * dim);
        if (options.instant) rows.fill(requestsHere);
        else await expertRows(request, rows, dim);
        const inferMs = performance.now() - startedMs;
        if (state.delayMs > 0) await delay(state.delayMs);
        state.requests += 1;
        if (socket.readyState !== socket.OPEN) return;
        socket.send(packr.pack(new Map<string, unknown>([
          ["actions", ndarray("<f4", [chunk, dim], new Uint8Array(rows.buffer))],
          ["server_timing", new Map([["infer_ms", inferMs]])],
        ])));
      }).catch((error: Error) => {
        if (socket.readyState === socket.OPEN) {
          socket.send(`Traceback (most recent call last):\n${error.stack ?? error.message}`);
          socket.close(1011, "Internal server error. Traceback included in previous frame.");
        }
      });
    });
  });

  const port = (wss.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/`,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    get requests() {
      return state.requests;
    },
    get connections() {
      return state.connections;
    },
    get lastRequest() {
      return state.lastRequest;
    },
    async close() {
      for (const timer of delays) clearTimeout(timer);
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

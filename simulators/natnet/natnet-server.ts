/**
 * A NatNet server that answers like Motive in unicast mode: NAT_CONNECT gets NAT_SERVERINFO,
 * NAT_REQUEST_MODELDEF gets the rigid body descriptions, and every frame of data goes to each client
 * that connected (at the address it connected from) until it disconnects or stays silent (no
 * keep-alive) for `clientTimeoutMs`. Frames are sent when the owner calls `sendFrame`; the world
 * binding (world-mocap-stream.ts) does that on simulated time.
 *
 * Rigid body ids are given out by name in first-seen order from 1, so a body keeps its id while the
 * scene changes; a frame that introduces a new name sets "tracked models changed".
 *
 * Faults a test can switch: drop the next frames, send raw bytes (malformed packets) to every client.
 * The packets are the emulator's own (natnet-wire.ts), not the agent's codec.
 */
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import type { ObjectPose } from "../../cell-agent/hardware/types.js";
import { NatNetMessageId, emptyPacket, framePacket, modelDefPacket, requestId, serverInfoPacket, type EmulatedNatNetVersion as NatNetVersion } from "./natnet-wire.js";

export interface SimNatNetServerOptions {
  /** Bitstream version streamed (default [4, 1, 0, 0], Motive 3.1). */
  natNetVersion?: NatNetVersion;
  /** Listen address (default "127.0.0.1") and command port (default 0: any; Motive uses 1510). */
  host?: string;
  port?: number;
  /** A client that sends nothing for this long stops getting frames, wall ms (default 10000). */
  clientTimeoutMs?: number;
}

export interface SimNatNetCounters {
  connects: number;
  modelDefRequests: number;
  framesSent: number;
  framesDropped: number;
  unrecognized: number;
}

interface Client {
  address: string;
  port: number;
  lastHeardMs: number;
}

/** The uint64 stamps in the frame suffix count ticks of this clock (1 MHz). */
const HIGH_RES_CLOCK_HZ = 1_000_000n;

export class SimNatNetServer {
  readonly version: NatNetVersion;
  readonly counters: SimNatNetCounters = { connects: 0, modelDefRequests: 0, framesSent: 0, framesDropped: 0, unrecognized: 0 };
  private readonly clients = new Map<string, Client>();
  private readonly ids = new Map<string, number>();
  private readonly clientTimeoutMs: number;
  private dropFrames = 0;

  private constructor(private readonly socket: Socket, options: SimNatNetServerOptions) {
    this.version = options.natNetVersion ?? [4, 1, 0, 0];
    this.clientTimeoutMs = options.clientTimeoutMs ?? 10_000;
    socket.on("message", (datagram, from) => this.receive(datagram, from));
  }

  static async start(options: SimNatNetServerOptions = {}): Promise<SimNatNetServer> {
    const socket = createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        socket.removeListener("error", reject);
        resolve();
      });
    });
    socket.on("error", () => undefined);
    return new SimNatNetServer(socket, options);
  }

  get address(): string {
    return this.socket.address().address;
  }

  get port(): number {
    return this.socket.address().port;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Streaming ids by rigid body name (ids given so far). */
  get bodyIds(): ReadonlyMap<string, number> {
    return this.ids;
  }

  /** Sends one frame of the given poses to every live client; returns whether it was sent (not dropped). */
  sendFrame(frameNumber: number, timestampS: number, poses: readonly ObjectPose[]): boolean {
    let changed = false;
    for (const pose of poses) {
      if (!this.ids.has(pose.name)) {
        this.ids.set(pose.name, this.ids.size + 1);
        changed = true;
      }
    }
    if (this.dropFrames > 0) {
      this.dropFrames--;
      this.counters.framesDropped++;
      return false;
    }
    const stamp = BigInt(Math.round(timestampS * Number(HIGH_RES_CLOCK_HZ)));
    const bytes = framePacket({
      frameNumber,
      rigidBodies: poses.map((p) => ({ id: this.ids.get(p.name)!, positionM: p.positionM, orientation: p.orientation, meanErrorM: 0.0002, trackingValid: true })),
      timestampS,
      stamp,
      trackedModelsChanged: changed,
    }, this.version);
    this.broadcast(bytes);
    this.counters.framesSent++;
    return true;
  }

  /** Fault: the next `n` frames are not sent (frame numbers still advance). */
  dropNextFrames(n: number): void {
    this.dropFrames += n;
  }

  /** Fault: sends raw bytes (e.g. a malformed packet) to every live client. */
  sendRaw(bytes: Uint8Array): void {
    this.broadcast(Buffer.from(bytes));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private broadcast(bytes: Buffer): void {
    const now = Date.now();
    for (const [key, client] of this.clients) {
      if (now - client.lastHeardMs > this.clientTimeoutMs) {
        this.clients.delete(key);
        continue;
      }
      this.socket.send(bytes, client.port, client.address);
    }
  }

  private receive(datagram: Buffer, from: RemoteInfo): void {
    const id = requestId(datagram);
    if (id === null) return;
    const key = `${from.address}:${from.port}`;
    const client = this.clients.get(key);
    if (client) client.lastHeardMs = Date.now();
    const reply = (bytes: Buffer): void => void this.socket.send(bytes, from.port, from.address);
    switch (id) {
      case NatNetMessageId.connect:
        this.counters.connects++;
        this.clients.set(key, { address: from.address, port: from.port, lastHeardMs: Date.now() });
        reply(serverInfoPacket({
          appName: "Assay NatNet simulator", appVersion: [3, 1, 0, 0], natNetVersion: this.version,
          highResClockHz: HIGH_RES_CLOCK_HZ, dataPort: 1511, multicastAddress: null,
        }));
        return;
      case NatNetMessageId.requestModelDef:
        this.counters.modelDefRequests++;
        reply(modelDefPacket([...this.ids].map(([name, bodyId]) => ({ name, id: bodyId })), this.version));
        return;
      case NatNetMessageId.keepAlive:
        return;
      case NatNetMessageId.disconnect:
        this.clients.delete(key);
        return;
      default:
        this.counters.unrecognized++;
        reply(emptyPacket(NatNetMessageId.unrecognizedRequest));
    }
  }
}

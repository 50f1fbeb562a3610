/**
 * `NatNetClient`: the MocapSource of a cell with an OptiTrack system, reading Motive's NatNet stream
 * over UDP unicast. One socket does both channels, as NaturalPoint's sample client does in unicast:
 * NAT_CONNECT goes to Motive's command port, Motive answers with NAT_SERVERINFO (the bitstream version
 * every later packet is decoded with) and sends frames of data back to the address that connected;
 * a keep-alive every `keepAliveMs` keeps that subscription.
 *
 * Rigid body names come from NAT_MODELDEF, asked at connect and again whenever a frame carries an id
 * with no name or flags "tracked models changed". Frames older than the newest one (reordered) are
 * dropped, gaps in frame numbers are counted as dropped frames, packets that do not decode are counted
 * and ignored.
 *
 * NOTE: open it with `NatNetClient.connect(options)`, which resolves once Motive has answered and the
 * model definitions are in. Call close() to release the socket.
 */
import { createSocket, type Socket } from "node:dgram";
import type { MocapSource, ObjectPose } from "../../hardware/types.js";
import { compileNatNetClientOptions, type NatNetClientInput, type NatNetClientOptions } from "./natnet-client-options.js";
import {
  NAT_CONNECT, NAT_DISCONNECT, NAT_FRAMEOFDATA, NAT_KEEPALIVE, NAT_MODELDEF, NAT_REQUEST_MODELDEF, NAT_SERVERINFO,
  NatNetDecodeError, decodeMessage, encodeConnect, encodeEmpty, type NatNetFrame, type NatNetVersion, type ServerInfo,
} from "./natnet-messages.js";

export type NatNetErrorCode = "timeout" | "no_frames" | "stale" | "closed";

export class NatNetError extends Error {
  constructor(readonly code: NatNetErrorCode, message: string) {
    super(message);
    this.name = "NatNetError";
  }
}

export interface NatNetClientCounters {
  /** Frames of data accepted. */
  frames: number;
  /** Frames that arrived after a newer one (reordered or duplicated) and were dropped. */
  lateFrames: number;
  /** Frame numbers skipped between accepted frames (lost on the network or not sent). */
  droppedFrames: number;
  /** Packets that did not decode (short, inconsistent, unsupported version). */
  malformedPackets: number;
  /** Frames that carried a rigid body id with no name yet. */
  unnamedBodies: number;
  /** NAT_REQUEST_MODELDEF sent. */
  modelDefRequests: number;
  /** Packets of a kind the client does not use. */
  ignoredPackets: number;
}

export interface NatNetClientDeps {
  /** Agent clock for pose timestamps and frame ages (default process.hrtime). */
  clock?: { nowNs(): bigint };
}

interface LatestFrame {
  frame: NatNetFrame;
  receivedNs: bigint;
}

export class NatNetClient implements MocapSource {
  readonly options: NatNetClientOptions;
  readonly counters: NatNetClientCounters = { frames: 0, lateFrames: 0, droppedFrames: 0, malformedPackets: 0, unnamedBodies: 0, modelDefRequests: 0, ignoredPackets: 0 };
  private serverInfoValue: ServerInfo | null = null;
  private names = new Map<number, string>();
  private haveModelDef = false;
  private latest: LatestFrame | null = null;
  private lastModelDefRequestMs = -Infinity;
  private keepAlive: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly frameListeners = new Set<() => void>();
  private readonly clock: { nowNs(): bigint };

  private constructor(private readonly socket: Socket, options: NatNetClientOptions, deps: NatNetClientDeps) {
    this.options = options;
    this.clock = deps.clock ?? { nowNs: () => process.hrtime.bigint() };
    socket.on("message", (datagram) => this.receive(datagram));
  }

  /** Binds, connects to Motive and fetches the model definitions; rejects with NatNetError("timeout") when Motive does not answer. */
  static async connect(input: NatNetClientInput = {}, deps: NatNetClientDeps = {}): Promise<NatNetClient> {
    const options = compileNatNetClientOptions(input);
    const socket = createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, options.localAddress, () => {
        socket.removeListener("error", reject);
        resolve();
      });
    });
    const client = new NatNetClient(socket, options, deps);
    // A UDP send error (e.g. ICMP port unreachable) is not fatal: Motive may come up later.
    socket.on("error", () => undefined);
    try {
      await client.handshake();
    } catch (error) {
      await client.close();
      throw error;
    }
    client.keepAlive = setInterval(() => client.send(encodeEmpty(NAT_KEEPALIVE)), options.keepAliveMs);
    client.keepAlive.unref();
    return client;
  }

  /** What Motive reported in NAT_SERVERINFO. */
  get serverInfo(): ServerInfo {
    return this.serverInfoValue!;
  }

  /** Rigid body names by streaming id, from the latest model definitions. */
  get bodyNames(): ReadonlyMap<number, string> {
    return this.names;
  }

  /** Number of the newest accepted frame, or -1. */
  get latestFrameNumber(): number {
    return this.latest?.frame.frameNumber ?? -1;
  }

  /**
   * The newest frame's tracked rigid bodies that have names, in the cell's frame (Motive streams
   * metres; set its up axis to Z). Throws NatNetError "no_frames" before the first frame and "stale"
   * when the newest frame is older than maxFrameAgeMs.
   */
  async readPoses(): Promise<{ tNs: bigint; poses: ObjectPose[] }> {
    if (this.closed) throw new NatNetError("closed", "the NatNet client was closed");
    const latest = this.latest;
    if (!latest) throw new NatNetError("no_frames", `no NatNet frame from ${this.options.serverAddress}:${this.options.commandPort} yet; check that Motive is streaming (Broadcast Frame Data on, unicast)`);
    const ageMs = Number(this.clock.nowNs() - latest.receivedNs) / 1e6;
    if (ageMs > this.options.maxFrameAgeMs) {
      throw new NatNetError("stale", `the newest NatNet frame (${latest.frame.frameNumber}) is ${Math.round(ageMs)} ms old (limit maxFrameAgeMs=${this.options.maxFrameAgeMs}); is Motive still streaming?`);
    }
    const poses: ObjectPose[] = [];
    for (const body of latest.frame.rigidBodies) {
      const name = this.names.get(body.id);
      if (!body.trackingValid || name === undefined) continue;
      poses.push({ name, positionM: [...body.positionM], orientation: [...body.orientation] });
    }
    return { tNs: latest.receivedNs, poses };
  }

  /**
   * Resolves once a frame numbered `frameNumber` or later has arrived and every body in it has a name
   * (the simulator's lock-step uses it); rejects with NatNetError("timeout") after `timeoutMs`, and with
   * NatNetError("closed") once the client is closed.
   */
  waitForFrame(frameNumber: number, timeoutMs: number): Promise<void> {
    if (this.closed) return Promise.reject(new NatNetError("closed", "the NatNet client was closed"));
    const ready = (): boolean => this.latest !== null && this.latest.frame.frameNumber >= frameNumber && this.latest.frame.rigidBodies.every((b) => this.names.has(b.id));
    if (ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      // A lost model definition reply must not leave the frame unnamed: ask again while waiting.
      const retry = setInterval(() => {
        if (this.latest?.frame.rigidBodies.some((b) => !this.names.has(b.id))) this.requestModelDef();
      }, this.options.modelDefRetryMs);
      const check = (): void => {
        if (!ready()) return;
        clearTimeout(timer);
        clearInterval(retry);
        this.frameListeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        clearInterval(retry);
        this.frameListeners.delete(check);
        reject(new NatNetError("timeout", `NatNet frame ${frameNumber} did not arrive within ${timeoutMs} ms (newest: ${this.latestFrameNumber})`));
      }, timeoutMs);
      this.frameListeners.add(check);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    if (this.serverInfoValue) this.send(encodeEmpty(NAT_DISCONNECT));
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private async handshake(): Promise<void> {
    const o = this.options;
    const deadline = Date.now() + o.connectTimeoutMs;
    const until = async (done: () => boolean, resend: () => void, what: string): Promise<void> => {
      while (!done()) {
        if (Date.now() >= deadline) throw new NatNetError("timeout", `Motive at ${o.serverAddress}:${o.commandPort} sent no ${what} within ${o.connectTimeoutMs} ms; check the address, the command port and that streaming is on (unicast)`);
        resend();
        await this.nextChange(Math.min(o.connectRetryMs, Math.max(1, deadline - Date.now())));
        if (this.closed) throw new NatNetError("closed", "the NatNet client was closed while connecting");
      }
    };
    await until(() => this.serverInfoValue !== null, () => this.send(encodeConnect({ appName: "assay-cell-agent", requestedVersion: o.requestedVersion })), "NAT_SERVERINFO");
    await until(() => this.haveModelDef, () => this.requestModelDef(true), "NAT_MODELDEF");
  }

  /** Resolves when a reply or frame arrives, or after `ms`. */
  private nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.frameListeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.frameListeners.add(done);
    });
  }

  private send(bytes: Buffer): void {
    if (this.closed) return;
    this.socket.send(bytes, this.options.commandPort, this.options.serverAddress);
  }

  private requestModelDef(force = false): void {
    const now = Date.now();
    if (!force && now - this.lastModelDefRequestMs < this.options.modelDefRetryMs) return;
    this.lastModelDefRequestMs = now;
    this.counters.modelDefRequests++;
    this.send(encodeEmpty(NAT_REQUEST_MODELDEF));
  }

  private version(): NatNetVersion {
    return this.serverInfoValue?.natNetVersion ?? [0, 0, 0, 0];
  }

  private receive(datagram: Buffer): void {
    if (this.closed) return;
    if (datagram.length >= 2 && datagram.readUInt16LE(0) === NAT_FRAMEOFDATA && !this.serverInfoValue) {
      // Cannot decode without the bitstream version; the handshake is still running.
      this.counters.ignoredPackets++;
      return;
    }
    let message;
    try {
      message = decodeMessage(datagram, this.version());
    } catch (error) {
      if (!(error instanceof NatNetDecodeError)) throw error;
      this.counters.malformedPackets++;
      return;
    }
    if ("serverInfo" in message) {
      this.serverInfoValue = message.serverInfo;
      this.notify();
    } else if ("rigidBodies" in message && message.id === NAT_MODELDEF) {
      this.names = new Map(message.rigidBodies.map((b) => [b.id, b.name]));
      this.haveModelDef = true;
      this.notify();
    } else if ("frame" in message) {
      this.onFrame(message.frame);
    } else if (message.id !== NAT_CONNECT) {
      this.counters.ignoredPackets++;
    }
  }

  private onFrame(frame: NatNetFrame): void {
    const previous = this.latest?.frame.frameNumber;
    if (previous !== undefined && frame.frameNumber <= previous) {
      this.counters.lateFrames++;
      return;
    }
    if (previous !== undefined) this.counters.droppedFrames += frame.frameNumber - previous - 1;
    this.counters.frames++;
    this.latest = { frame, receivedNs: this.clock.nowNs() };
    const unnamed = frame.rigidBodies.some((b) => !this.names.has(b.id));
    if (unnamed) this.counters.unnamedBodies++;
    if (unnamed || frame.trackedModelsChanged) this.requestModelDef();
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.frameListeners]) listener();
  }
}

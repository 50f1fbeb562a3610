/**
 * The agent's end of the LiveFeed call: camera frames and live state for the coordinator's viewers,
 * sent only while the coordinator's Watch asks for them.
 *
 * Never in the control loop's way: the runner only hands over references (`frame`, `joints`: no
 * copy, no encoding) and a timer at the Watch's rate sends the newest of each. A frame is sent only
 * when the call's send buffer is nearly empty; otherwise it is dropped and the next tick sends
 * whatever is newest by then, so a slow link loses old frames, never delays new ones. Between
 * episodes (nothing captures) the feed captures the watched cameras itself at that rate.
 */
import type { ClientWritableStream, Metadata, ServiceError } from "@grpc/grpc-js";
import type { CellLinkClient, LiveFeedEnd, LiveMessage, Watch } from "../../protocol/gen/cell.js";
import type { Camera, CameraFrame } from "../hardware/types.js";

/** What the runner hands over as it goes. */
export interface LiveTap {
  frame(camera: string, frame: CameraFrame): void;
  joints(positionRad: readonly number[]): void;
  /** A state event (episode started or finished, e-stop), JSON as coordinator/streams/cell-stream-hub.ts CellStateEvent. */
  event(event: Record<string, unknown>): void;
}

/** More than this many bytes waiting in the call's buffer and a frame is dropped. */
const MAX_BUFFERED_BYTES = 256 * 1024;
/** Joint states at most this often. */
const JOINTS_PERIOD_MS = 100;
const MAX_QUEUED_EVENTS = 100;
/** A tapped frame older than this is stale: the feed captures on its own (the cell is idle). */
const TAP_FRESH_MS = 500;

export interface LiveFeedOptions {
  /** The current coordinator's client, read for every call (it changes when the link fails over). */
  client: () => CellLinkClient;
  metadata: () => Metadata;
  cameras: readonly Camera[];
  jointNames: readonly string[];
  log: (line: string) => void;
}

export class LiveFeed implements LiveTap {
  private watch: Watch = { cameras: [], state: false, maxFrameRateHz: 0 };
  private call: ClientWritableStream<LiveMessage> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryAfterMs = 0;
  private readonly tapped = new Map<string, { frame: CameraFrame; atMs: number }>();
  private readonly sent = new Map<string, CameraFrame>();
  private readonly capturing = new Set<string>();
  private readonly seqs = new Map<string, number>();
  private latestJoints: readonly number[] | undefined;
  private jointsSentAtMs = 0;
  private events: Array<Record<string, unknown>> = [];
  /** Frames dropped because the link was behind (for metrics and tests). */
  dropped = 0;

  constructor(private readonly options: LiveFeedOptions) {}

  frame(camera: string, frame: CameraFrame): void {
    if (this.watch.cameras.includes(camera)) this.tapped.set(camera, { frame, atMs: Date.now() });
  }

  joints(positionRad: readonly number[]): void {
    if (this.watch.state) this.latestJoints = positionRad;
  }

  event(event: Record<string, unknown>): void {
    if (!this.watch.state) return;
    this.events.push({ ...event, t_ms: Date.now() });
    if (this.events.length > MAX_QUEUED_EVENTS) this.events.shift();
  }

  /** A Watch from the coordinator replaces the previous one. */
  setWatch(watch: Watch): void {
    this.watch = { cameras: watch.cameras.filter((c) => this.options.cameras.some((k) => k.name === c)), state: watch.state, maxFrameRateHz: watch.maxFrameRateHz };
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.watch.cameras.length === 0 && !this.watch.state) {
      this.endCall();
      this.tapped.clear();
      this.events = [];
      return;
    }
    const periodMs = 1000 / Math.min(30, Math.max(0.5, this.watch.maxFrameRateHz || 15));
    this.timer = setInterval(() => this.tick(), periodMs);
    this.timer.unref();
  }

  /** The Connect stream went down: stop until the coordinator sends a Watch again. */
  linkDown(): void {
    this.setWatch({ cameras: [], state: false, maxFrameRateHz: 0 });
  }

  stop(): void {
    this.linkDown();
  }

  private open(): ClientWritableStream<LiveMessage> | undefined {
    if (this.call) return this.call;
    if (Date.now() < this.retryAfterMs) return undefined;
    const call = this.options.client().liveFeed(this.options.metadata(), (error: ServiceError | null, _end?: LiveFeedEnd) => {
      if (this.call === call) this.call = undefined;
      if (error && this.timer) {
        this.options.log(`live feed ended: ${error.details || error.message}; retrying in 1 s while someone watches`);
        this.retryAfterMs = Date.now() + 1000;
      }
    });
    call.on("error", () => undefined); // reported through the callback
    this.call = call;
    return call;
  }

  private endCall(): void {
    const call = this.call;
    this.call = undefined;
    call?.end();
  }

  private tick(): void {
    const call = this.open();
    if (!call) return;
    for (const camera of this.watch.cameras) {
      const tapped = this.tapped.get(camera);
      if (tapped && Date.now() - tapped.atMs <= TAP_FRESH_MS) this.send(call, camera, tapped.frame, tapped.atMs);
      else void this.captureIdle(camera);
    }
    if (!this.watch.state) return;
    const now = Date.now();
    if (this.latestJoints && now - this.jointsSentAtMs >= JOINTS_PERIOD_MS) {
      this.jointsSentAtMs = now;
      call.write({ stateJson: JSON.stringify({ type: "joints", t_ms: now, names: this.options.jointNames, position_rad: this.latestJoints }) });
      this.latestJoints = undefined;
    }
    for (const event of this.events.splice(0)) call.write({ stateJson: JSON.stringify(event) });
  }

  /** Between episodes nothing captures: take a frame from the camera ourselves. */
  private async captureIdle(camera: string): Promise<void> {
    const device = this.options.cameras.find((c) => c.name === camera);
    if (!device || this.capturing.has(camera)) return;
    this.capturing.add(camera);
    try {
      const frame = await device.capture();
      const call = this.call;
      if (call && this.watch.cameras.includes(camera)) this.send(call, camera, frame, Date.now());
    } catch {
      // A camera that cannot give a frame now simply shows none; the episode path reports real faults.
    } finally {
      this.capturing.delete(camera);
    }
  }

  private send(call: ClientWritableStream<LiveMessage>, camera: string, frame: CameraFrame, capturedAtMs: number): void {
    if (this.sent.get(camera) === frame) return;
    if (call.writableLength > MAX_BUFFERED_BYTES) {
      this.dropped++;
      return;
    }
    this.sent.set(camera, frame);
    const seq = (this.seqs.get(camera) ?? 0) + 1;
    this.seqs.set(camera, seq);
    call.write({ frame: { camera, width: frame.width, height: frame.height, jpeg: frame.jpeg, capturedAtMs, seq } });
  }
}

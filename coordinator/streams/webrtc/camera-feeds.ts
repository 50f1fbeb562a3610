/**
 * The VP8 RTP feed of each camera, shared by all its WebRTC viewers: one hub subscription and one
 * ffmpeg encoder per camera, whatever the number of viewers. The first viewer to attach starts both;
 * the last to detach stops both, so a camera nobody watches costs nothing and the hub can tell the
 * cell to stop sending its frames.
 *
 * Shared rather than one encoder per viewer because encoding is the whole cost (decoding the JPEG
 * and encoding VP8 is a few ms of CPU per frame; forwarding the packets is little), and it grows
 * with cameras, not with viewers. What sharing costs: a viewer who joins a running encoder waits
 * for its next keyframe (at most KEYFRAME_INTERVAL_MS), and the bitrate is one for all (no
 * per-viewer adaptation, which a LAN or loopback viewer does not need).
 */
import type { CameraInfo, CellStreamHub } from "../cell-stream-hub.js";
import type { Logger } from "../../scheduler/scheduler.js";
import { RtpContinuity } from "./rtp-continuity.js";
import { Vp8RtpEncoder, vp8BitrateKbps } from "./vp8-rtp-encoder.js";

/**
 * After ffmpeg dies under a watched camera a new one starts this much later, doubling up to the
 * maximum while restarts produce no packet (a missing or broken binary must not spin).
 */
const RESTART_DELAY_MS = { initial: 1000, max: 30_000 } as const;

export type RtpSink = (packet: Buffer) => void;

export interface CameraFeedsOptions {
  hub: CellStreamHub;
  maxFrameRateHz: number;
  ffmpegPath: string;
  logger: Logger;
}

/** One camera's subscription and encoder, alive from its first sink to its last. */
class CameraFeed {
  readonly sinks = new Set<RtpSink>();
  private encoder: Vp8RtpEncoder | undefined;
  private starting: Promise<void> | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private restartDelayMs: number = RESTART_DELAY_MS.initial;
  private stopped = false;
  /** Viewers' receivers see one stream, whatever restarts happen under it. */
  private readonly continuity = new RtpContinuity();
  private readonly unwatch: () => void;

  constructor(
    private readonly cellId: string,
    private readonly camera: CameraInfo,
    private readonly options: CameraFeedsOptions,
  ) {
    this.startEncoder();
    this.unwatch = options.hub.watchCamera(cellId, camera.name, (frame) => this.encoder?.encode(frame.jpeg));
  }

  get label(): string {
    return `cell ${this.cellId} camera ${this.camera.name}`;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.starting;
    await this.encoder?.stop();
  }

  private startEncoder(): void {
    const { maxFrameRateHz, ffmpegPath, logger } = this.options;
    this.continuity.newSource();
    this.starting = Vp8RtpEncoder.start({
      ffmpegPath,
      maxFrameRateHz,
      bitrateKbps: vp8BitrateKbps(this.camera.width, this.camera.height, maxFrameRateHz),
      onRtp: (packet) => {
        this.restartDelayMs = RESTART_DELAY_MS.initial;
        this.continuity.rewrite(packet, performance.now());
        for (const sink of this.sinks) sink(packet);
      },
      onExit: (error) => {
        this.encoder = undefined;
        if (this.stopped) return;
        const delayMs = this.restartDelayMs;
        this.restartDelayMs = Math.min(RESTART_DELAY_MS.max, delayMs * 2);
        logger.error(`WebRTC feed of ${this.label}: ${error.message}; restarting in ${delayMs} ms`);
        this.restartTimer = setTimeout(() => this.startEncoder(), delayMs);
      },
    }).then(
      async (encoder) => {
        this.encoder = encoder;
        if (this.stopped) await encoder.stop();
      },
      (error: Error) => {
        // Binding a loopback UDP socket failed: nothing to retry into.
        logger.error(`WebRTC feed of ${this.label}: the encoder did not start: ${error.message}`);
      },
    );
  }
}

export class CameraFeeds {
  private readonly feeds = new Map<string, CameraFeed>();
  private readonly stopping = new Set<Promise<void>>();

  constructor(private readonly options: CameraFeedsOptions) {}

  /**
   * Sends the camera's RTP packets to `sink` until the returned function is called. The packet
   * buffer is shared by every sink of the camera: a sink must not modify it.
   */
  attach(cellId: string, camera: CameraInfo, sink: RtpSink): () => void {
    const key = JSON.stringify([cellId, camera.name]);
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = new CameraFeed(cellId, camera, this.options);
      this.feeds.set(key, feed);
    }
    const attached = feed;
    attached.sinks.add(sink);
    return () => {
      if (!attached.sinks.delete(sink) || attached.sinks.size > 0) return;
      // A viewer arriving from now on gets a new feed; this one winds down on its own.
      if (this.feeds.get(key) === attached) this.feeds.delete(key);
      this.track(attached.stop());
    };
  }

  /** Cameras currently encoding. */
  get size(): number {
    return this.feeds.size;
  }

  /** Stops every feed and waits for their encoders to exit. */
  async close(): Promise<void> {
    for (const feed of this.feeds.values()) this.track(feed.stop());
    this.feeds.clear();
    while (this.stopping.size > 0) await Promise.all([...this.stopping]);
  }

  private track(stopped: Promise<void>): void {
    const tracked = stopped.catch((error: Error) => this.options.logger.error(`WebRTC feed did not stop cleanly: ${error.message}`));
    this.stopping.add(tracked);
    void tracked.finally(() => this.stopping.delete(tracked));
  }
}

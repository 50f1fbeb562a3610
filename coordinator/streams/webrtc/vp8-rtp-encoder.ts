/**
 * One long-lived ffmpeg process (the binary of @ffmpeg-installer/ffmpeg) turning one camera's JPEG
 * frames into VP8 RTP packets, which it sends to a UDP socket of ours on 127.0.0.1; `onRtp` gets
 * each packet as it arrives, ready for werift's `MediaStreamTrack.writeRtp`.
 *
 * Why these settings (measured with this ffmpeg build, 2 cores):
 * - Input is multipart JPEG (`-f mpjpeg`) with a Content-Length per part, so the demuxer hands a
 *   frame on as soon as its last byte arrives. `image2pipe`/`jpeg_pipe` find a frame's end only when
 *   the next one starts (and read 4 KiB blocks), which holds every frame back by one or two frame
 *   periods. `-fflags nobuffer` also costs one frame here, so it is not used.
 * - Timestamps are the wall clock when ffmpeg filters the frame, in milliseconds (`settb`, `setpts`
 *   with RTCTIME, `-enc_time_base 1/1000`, `-vsync 0`). `-use_wallclock_as_timestamps` is no use on
 *   this input: mpjpeg's 1/25 s time base rounds the clock to 40 ms, and two frames closer than that
 *   got one RTP timestamp.
 * - libvpx realtime: `-deadline realtime -cpu-used 8`, no look-ahead (`-lag-in-frames 0`, no alt-ref
 *   frames), error resilient, a keyframe every second (`-force_key_frames`, on the timestamps, so
 *   the interval holds at any frame rate) because the encoder is shared and a viewer who joins, or
 *   loses a packet of a keyframe, waits for the next one. Bitrate capped with a half-second buffer.
 *   A frame leaves as RTP about 1 ms (320x240), 4 ms (640x480) or 11 ms (1280x720) after its last
 *   byte reaches ffmpeg, which uses 2, 6 or 17 % of a core at 15 Hz.
 * - RTP packets of at most 1200 bytes (room for SRTP and header extensions under a 1280 MTU), no
 *   RTCP from ffmpeg (`skip_rtcp`; werift writes the sender reports), and any RTCP that still came
 *   would land on our own socket (`rtcpport`) instead of port+1, which may be somebody else's.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import type { Readable, Writable } from "node:stream";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import { LatestFrameGate } from "./latest-frame-gate.js";

/** The RTP payload type ffmpeg writes; werift rewrites it to the negotiated one. */
export const VP8_PAYLOAD_TYPE = 96;
/** A keyframe this often: what a viewer joining a running encoder waits at most for its first picture. */
export const KEYFRAME_INTERVAL_MS = 1000;
/** Largest RTP packet ffmpeg sends. */
export const RTP_MAX_PACKET_BYTES = 1200;
/** ffmpeg gets this long to exit after its stdin closes before it is killed. */
const EXIT_GRACE_MS = 2000;
const MULTIPART_BOUNDARY = "assayframe";

export const DEFAULT_FFMPEG_PATH = ffmpegInstaller.path;

/** Bits per second for a camera: 0.1 bit per pixel per frame at the rate bound, at least 200 kbit/s. */
export function vp8BitrateKbps(widthPx: number, heightPx: number, maxFrameRateHz: number): number {
  return Math.max(200, Math.round((widthPx * heightPx * maxFrameRateHz * 0.1) / 1000));
}

/** ffmpeg's arguments: multipart JPEG on stdin, VP8 RTP to 127.0.0.1:`rtpPort`. */
export function vp8EncoderArgs(options: { rtpPort: number; bitrateKbps: number; maxFrameRateHz: number }): string[] {
  const { rtpPort, bitrateKbps, maxFrameRateHz } = options;
  const keyframeIntervalS = KEYFRAME_INTERVAL_MS / 1000;
  return [
    "-hide_banner", "-loglevel", "error", "-nostats",
    // Start on the first frame instead of probing several.
    "-probesize", "32", "-analyzeduration", "0",
    "-f", "mpjpeg", "-i", "pipe:0",
    "-an",
    "-vf", "settb=1/1000,setpts=(RTCTIME-RTCSTART)/(TB*1000000),format=yuv420p",
    "-enc_time_base", "1/1000", "-vsync", "0",
    "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
    "-lag-in-frames", "0", "-auto-alt-ref", "0", "-error-resilient", "1",
    "-b:v", `${bitrateKbps}k`, "-maxrate", `${bitrateKbps}k`, "-bufsize", `${Math.round(bitrateKbps / 2)}k`,
    // -g only backs up -force_key_frames (frames, not seconds); the forced keyframes come first.
    "-g", String(Math.max(1, Math.ceil(maxFrameRateHz * keyframeIntervalS * 4))),
    "-force_key_frames", `expr:gte(t,n_forced*${keyframeIntervalS})`,
    "-f", "rtp", "-payload_type", String(VP8_PAYLOAD_TYPE), "-rtpflags", "skip_rtcp",
    `rtp://127.0.0.1:${rtpPort}?pkt_size=${RTP_MAX_PACKET_BYTES}&rtcpport=${rtpPort}`,
  ];
}

/** One JPEG as a part of the multipart stream ffmpeg reads. */
export function multipartJpegPart(jpeg: Uint8Array): Buffer {
  const head = `--${MULTIPART_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.byteLength}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "ascii"), jpeg, Buffer.from("\r\n", "ascii")]);
}

export interface Vp8RtpEncoderOptions {
  ffmpegPath: string;
  /** Frames are written at most this often; newer frames replace waiting ones. */
  maxFrameRateHz: number;
  bitrateKbps: number;
  /** Each RTP packet ffmpeg sends, as received. */
  onRtp(packet: Buffer): void;
  /** ffmpeg exited without `stop()`; the encoder is dead (its socket closed). */
  onExit(error: Error): void;
}

export class Vp8RtpEncoder {
  private stopping = false;
  private stderrTail = "";
  private readonly gate: LatestFrameGate<Uint8Array>;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, null, Readable>,
    private readonly socket: Socket,
    private readonly options: Vp8RtpEncoderOptions,
  ) {
    this.gate = new LatestFrameGate<Uint8Array>({
      minIntervalMs: 1000 / options.maxFrameRateHz,
      write: (jpeg) => child.stdin.write(multipartJpegPart(jpeg)),
    });
    child.stdin.on("drain", () => this.gate.ready());
    child.stdin.on("error", () => undefined); // EPIPE when ffmpeg died: reported by its exit
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    socket.on("message", (packet) => {
      // RTP only: RTCP packet types (200-204) share the port in case ffmpeg sends any.
      if ((packet[1]! & 0x7f) === VP8_PAYLOAD_TYPE) options.onRtp(packet);
    });
    this.exited = new Promise<void>((resolve) => {
      child.on("error", (error) => {
        this.stderrTail += String(error);
      });
      child.on("close", (code, signal) => {
        this.gate.close();
        socket.close();
        resolve();
        if (!this.stopping) {
          const detail = this.stderrTail.trim() || "no output";
          options.onExit(new Error(`ffmpeg (VP8 encoder) exited with ${signal ?? code}: ${detail}`));
        }
      });
    });
  }

  /** Binds the UDP socket and starts ffmpeg sending to it. */
  static async start(options: Vp8RtpEncoderOptions): Promise<Vp8RtpEncoder> {
    if (!(options.maxFrameRateHz > 0)) throw new Error(`maxFrameRateHz must be positive; got ${options.maxFrameRateHz}`);
    const socket = createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, "127.0.0.1", () => {
        socket.off("error", reject);
        resolve();
      });
    });
    const args = vp8EncoderArgs({ rtpPort: socket.address().port, bitrateKbps: options.bitrateKbps, maxFrameRateHz: options.maxFrameRateHz });
    const child = spawn(options.ffmpegPath, args, { stdio: ["pipe", "ignore", "pipe"] });
    return new Vp8RtpEncoder(child, socket, options);
  }

  /** The ffmpeg process id (for CPU figures). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Frames offered, written to ffmpeg, and dropped for a newer one. */
  get counts(): Readonly<{ offered: number; written: number; dropped: number }> {
    return this.gate.counts;
  }

  /** Offers a frame; it is written when the rate bound and ffmpeg allow, unless a newer one comes first. */
  encode(jpeg: Uint8Array): void {
    this.gate.offer(jpeg);
  }

  /** Closes ffmpeg's stdin, waits for it to exit (killing it after a grace period) and closes the socket. */
  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.gate.close();
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill("SIGKILL"), EXIT_GRACE_MS);
      await this.exited;
      clearTimeout(timer);
    }
    await this.exited;
  }
}

/**
 * Live view of a cell over WebRTC: its cameras as VP8 video tracks and its live state on a data
 * channel, negotiated over a WebSocket the coordinator's HTTP server has already authenticated
 * (`<streams_url>/cells/<cell>`) and hands to `handle(ws, cellId)`.
 *
 * ## Signalling protocol
 * JSON text frames; the coordinator offers, the browser answers.
 *
 * 1. On connect the coordinator sends
 *    `{"type":"offer","sdp":"<SDP>","cameras":[{"name":"front","mid":"0","width":640,"height":480}]}`.
 *    The offer has one sendonly VP8 video m-line per camera (`cameras[i].mid` names it; its msid
 *    stream id is the camera name, percent-encoded) and one data channel labelled `state`. It is
 *    complete: the coordinator's ICE candidates are in the SDP.
 * 2. The browser sets it as remote description and replies `{"type":"answer","sdp":"<SDP>"}`.
 * 3. The browser may trickle its candidates as `{"type":"candidate","candidate":<RTCIceCandidateInit>}`
 *    (what `RTCIceCandidate.toJSON()` returns), and `{"type":"candidate","candidate":null}` when it
 *    has no more; or put them all in the answer. Should the coordinator find a candidate after the
 *    offer, it sends it the same way. Candidates with mDNS names (`<uuid>.local`, what browsers
 *    give by default) are ignored: the coordinator learns the browser's address from the browser's
 *    connectivity checks to the coordinator's candidates, so the browser must be able to reach
 *    them (same network, or a TURN server in `iceServers` and in the browser's configuration).
 * 4. Once connected, each track carries its camera (first picture at the next keyframe, at most 1 s
 *    away), and every live state event of the cell arrives on `state` as one JSON text message:
 *    `{"type":"joints","t_ms":...,"names":[...],"position_rad":[...]}`, `episode_started`,
 *    `episode_finished`, `estop`, `event` (see CellStateEvent in cell-stream-hub.ts).
 *
 * On a problem the coordinator sends `{"type":"error","message":"..."}`. An invalid message gets an
 * error and the session goes on; a fatal one (the cell has no cameras: close code 4404; the answer
 * refused, ICE or DTLS failed, not connected within `connectTimeoutMs`: 1011) is followed by closing
 * the socket. Closing the socket, or the peer connection, ends the view and releases the cell's
 * streams; on shutdown the coordinator closes sockets with 1001. There is no renegotiation: to see
 * cameras the cell gained, connect again.
 *
 * For the lowest delay a browser can set `receiver.jitterBufferTarget = 0` on each track's receiver.
 */
import type { WebSocket } from "ws";
import type { RTCIceServer } from "werift";
import type { Logger } from "../../scheduler/scheduler.js";
import type { CellStreamHub } from "../cell-stream-hub.js";
import { CameraFeeds } from "./camera-feeds.js";
import { CLOSE_CODES, ViewerSession } from "./viewer-session.js";
import { DEFAULT_FFMPEG_PATH } from "./vp8-rtp-encoder.js";
import type { ServerMessage } from "./signalling-messages.js";

export type { RTCIceServer };

export interface WebRtcSignallingOptions {
  /** Where frames and state come from. */
  hub: CellStreamHub;
  /**
   * STUN/TURN servers for the coordinator's side of ICE (`{urls, username?, credential?}`); default
   * none: host candidates only, enough on a LAN or loopback. Browsers behind NAT need a TURN server
   * here and in their own configuration.
   */
  iceServers?: RTCIceServer[];
  /** Frame-rate bound per camera; frames beyond it are dropped (the newest kept). Default 15. */
  maxFrameRateHz?: number;
  /** A viewer not connected this long after `handle()` is closed with an error; default 20000. */
  connectTimeoutMs?: number;
  /** The ffmpeg binary (needs libvpx); default @ffmpeg-installer/ffmpeg's. */
  ffmpegPath?: string;
  /** Default console. */
  logger?: Logger;
}

export type CompiledWebRtcSignallingOptions = Required<WebRtcSignallingOptions>;

const OPTION_KEYS = ["hub", "iceServers", "maxFrameRateHz", "connectTimeoutMs", "ffmpegPath", "logger"] as const;

/** Fills defaults and rejects unknown or invalid options. */
export function compileWebRtcSignallingOptions(options: WebRtcSignallingOptions): CompiledWebRtcSignallingOptions {
  const unknown = Object.keys(options).filter((k) => !(OPTION_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`unknown WebRTC signalling option(s): ${unknown.join(", ")}; known: ${OPTION_KEYS.join(", ")}`);
  if (!options.hub) throw new Error("WebRTC signalling option hub is required");
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<WebRtcSignallingOptions>;
  const compiled: CompiledWebRtcSignallingOptions = {
    iceServers: [],
    maxFrameRateHz: 15,
    connectTimeoutMs: 20_000,
    ffmpegPath: DEFAULT_FFMPEG_PATH,
    logger: console,
    ...defined,
  } as CompiledWebRtcSignallingOptions;
  if (!(compiled.maxFrameRateHz > 0 && compiled.maxFrameRateHz <= 120)) {
    throw new Error(`maxFrameRateHz must be a number of frames per second in (0, 120]; got ${compiled.maxFrameRateHz}`);
  }
  if (!(compiled.connectTimeoutMs > 0)) {
    throw new Error(`connectTimeoutMs must be a positive number of milliseconds; got ${compiled.connectTimeoutMs}`);
  }
  for (const server of compiled.iceServers) {
    const urls = Array.isArray(server.urls) ? server.urls : [server.urls];
    const bad = urls.find((url) => !/^(stun|stuns|turn|turns):/.test(url));
    if (bad !== undefined || urls.length === 0) {
      throw new Error(`iceServers urls must be stun:, stuns:, turn: or turns: URLs; got ${JSON.stringify(server.urls)}`);
    }
  }
  return compiled;
}

export interface WebRtcSignalling {
  /**
   * Takes over an authenticated, open WebSocket of a viewer of `cellId` and runs the protocol above
   * on it. Returns the function that ends the view at once (its peer connection and encoders'
   * subscriptions too, then the socket with `code` and `reason`), when a session started.
   */
  handle(ws: WebSocket, cellId: string): ((code: number, reason: string) => void) | void;
  /** Viewers with an open session (negotiating or connected), of one cell or of all. */
  viewers(cellId?: string): number;
  /** Ends every session (close code 1001), stops every encoder and waits for them to exit. */
  close(): Promise<void>;
}

export function createWebRtcSignalling(options: WebRtcSignallingOptions): WebRtcSignalling {
  const { hub, iceServers, maxFrameRateHz, connectTimeoutMs, ffmpegPath, logger } = compileWebRtcSignallingOptions(options);
  const feeds = new CameraFeeds({ hub, maxFrameRateHz, ffmpegPath, logger });
  const sessions = new Set<ViewerSession>();
  let closing = false;

  const refuse = (ws: WebSocket, message: string, code: number): void => {
    ws.send(JSON.stringify({ type: "error", message } satisfies ServerMessage));
    ws.close(code, "refused");
  };

  return {
    handle(ws, cellId) {
      if (closing) return refuse(ws, "the coordinator is shutting down; reconnect later", CLOSE_CODES.shutdown);
      const cameras = hub.cameras(cellId);
      if (cameras.length === 0) {
        return refuse(ws, `cell ${JSON.stringify(cellId)} has no cameras to show: it is not connected, or has none`, CLOSE_CODES.noCameras);
      }
      const session = new ViewerSession({
        ws,
        cellId,
        cameras,
        hub,
        feeds,
        iceServers,
        connectTimeoutMs,
        logger,
        onClosed: (closed) => sessions.delete(closed),
      });
      sessions.add(session);
      return (code, reason) => void session.close(code, reason);
    },

    viewers(cellId) {
      let count = 0;
      for (const session of sessions) if (cellId === undefined || session.cellId === cellId) count++;
      return count;
    },

    async close() {
      closing = true;
      await Promise.all([...sessions].map((session) => session.close(CLOSE_CODES.shutdown, "shutting down")));
      await feeds.close();
    },
  };
}

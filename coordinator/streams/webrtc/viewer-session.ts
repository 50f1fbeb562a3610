/**
 * One browser watching one cell over WebRTC: its signalling socket, its peer connection (one
 * sendonly VP8 track per camera and the `state` data channel), and what it is subscribed to.
 * Camera feeds are attached only while the peer is connected, the cell's state only while the data
 * channel is open; closing the socket or the peer connection releases everything.
 */
import type { RawData, WebSocket } from "ws";
import {
  MediaStream,
  MediaStreamTrack,
  RTCPeerConnection,
  RtpPacket,
  Vp8RtpPayload,
  useVP8,
  type RTCDataChannel,
  type RTCIceServer,
  type RTCRtpTransceiver,
} from "werift";
import type { Logger } from "../../scheduler/scheduler.js";
import type { CameraInfo, CellStreamHub } from "../cell-stream-hub.js";
import type { CameraFeeds } from "./camera-feeds.js";
import { parseClientMessage, type ClientMessage, type ServerMessage } from "./signalling-messages.js";

export type ViewerState = "offering" | "awaiting-answer" | "connecting" | "connected" | "closed";

const MOVES: Record<ViewerState, readonly ViewerState[]> = {
  offering: ["awaiting-answer", "closed"],
  "awaiting-answer": ["connecting", "closed"],
  connecting: ["connected", "closed"],
  connected: ["closed"],
  closed: [],
};

/** The viewer's next state; throws on a move the lifecycle does not have. */
export function transitionViewer(from: ViewerState, to: ViewerState): ViewerState {
  if (!MOVES[from].includes(to)) throw new Error(`a WebRTC viewer cannot move from ${from} to ${to}`);
  return to;
}

/** Close codes of the signalling socket. */
export const CLOSE_CODES = {
  /** The viewer failed (no answer, ICE or DTLS failed, a refused answer); an error message preceded. */
  failed: 1011,
  /** The coordinator is shutting down. */
  shutdown: 1001,
  /** The cell has no cameras to show (not connected); an error message preceded. */
  noCameras: 4404,
} as const;

/** State events are dropped while this much is still queued on the data channel. */
const MAX_STATE_BUFFERED_BYTES = 1 << 20;

export interface ViewerSessionOptions {
  ws: WebSocket;
  cellId: string;
  cameras: CameraInfo[];
  hub: CellStreamHub;
  feeds: CameraFeeds;
  iceServers: RTCIceServer[];
  /** Closed with an error unless connected this long after the socket was handed over. */
  connectTimeoutMs: number;
  logger: Logger;
  /** Called once, when the session has released everything. */
  onClosed(session: ViewerSession): void;
}

interface CameraTrack {
  camera: CameraInfo;
  track: MediaStreamTrack;
  transceiver: RTCRtpTransceiver;
}

export class ViewerSession {
  private current: ViewerState = "offering";
  private readonly pc: RTCPeerConnection;
  private readonly cameraTracks: CameraTrack[];
  private readonly stateChannel: RTCDataChannel;
  private readonly releases: Array<() => void> = [];
  private readonly connectTimer: ReturnType<typeof setTimeout>;
  private closed: Promise<void> | undefined;
  private droppedStateEvents = 0;

  constructor(private readonly options: ViewerSessionOptions) {
    const { ws, cameras, iceServers, connectTimeoutMs } = options;
    // max-bundle: one ICE transport for every m-line. Under werift's default (max-compat) each m-line
    // gathers its own, and those the browser's answer bundles away kept their UDP sockets after
    // close() (werift 0.24.4: 4 sockets leaked per viewer of two cameras).
    this.pc = new RTCPeerConnection({ iceServers, bundlePolicy: "max-bundle", codecs: { audio: [], video: [useVP8()] } });
    this.cameraTracks = cameras.map((camera) => {
      const track = new MediaStreamTrack({ kind: "video" });
      const stream = new MediaStream({ id: encodeURIComponent(camera.name) });
      const transceiver = this.pc.addTransceiver(track, { direction: "sendonly", streams: [stream] });
      return { camera, track, transceiver };
    });
    this.stateChannel = this.pc.createDataChannel("state", { ordered: true });

    this.pc.connectionStateChange.subscribe((state) => this.onConnectionState(state));
    this.pc.onIceCandidate.subscribe((candidate) => {
      // Candidates gathered before the offer went out are in its SDP.
      if (candidate && this.current !== "offering") this.send({ type: "candidate", candidate: candidate.toJSON() });
    });
    this.stateChannel.stateChanged.subscribe((state) => {
      if (state === "open") this.watchState();
    });
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (isBinary) this.send({ type: "error", message: "messages must be JSON text frames; got a binary frame" });
      else void this.onMessage(data.toString());
    });
    ws.on("close", () => void this.close());
    ws.on("error", (error) => {
      options.logger.warn(`WebRTC viewer of cell ${options.cellId}: socket error: ${error.message}`);
      void this.close();
    });
    this.connectTimer = setTimeout(
      () => this.fail(`the peer connection was not established within ${connectTimeoutMs} ms (state ${this.current}); check ICE servers and firewalls`),
      connectTimeoutMs,
    );
    void this.offer().catch((error: Error) => this.fail(`the offer could not be made: ${error.message}`));
  }

  get cellId(): string {
    return this.options.cellId;
  }

  /** Ends the session: unsubscribes, closes the peer connection and the socket. Idempotent. */
  close(code: number = CLOSE_CODES.failed, reason = ""): Promise<void> {
    if (!this.closed) {
      this.current = transitionViewer(this.current, "closed");
      // From a microtask: pc.close() reports "closed" synchronously, and that report must find this.closed set.
      this.closed = Promise.resolve().then(() => this.release(code, reason));
    }
    return this.closed;
  }

  private async release(code: number, reason: string): Promise<void> {
    clearTimeout(this.connectTimer);
    for (const release of this.releases.splice(0)) release();
    for (const { track } of this.cameraTracks) track.stop();
    const { ws } = this.options;
    if (ws.readyState === ws.CONNECTING || ws.readyState === ws.OPEN) ws.close(code, reason);
    try {
      await this.pc.close();
    } catch (error) {
      this.options.logger.warn(`WebRTC viewer of cell ${this.cellId}: closing the peer connection: ${(error as Error).message}`);
    }
    if (this.droppedStateEvents > 0) {
      this.options.logger.info(`WebRTC viewer of cell ${this.cellId}: ${this.droppedStateEvents} state events dropped (data channel backlog)`);
    }
    this.options.onClosed(this);
  }

  private move(to: ViewerState): void {
    this.current = transitionViewer(this.current, to);
  }

  private async offer(): Promise<void> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    if (this.current === "closed") return;
    // setLocalDescription resolves once host (and STUN/TURN) candidates are gathered: the SDP carries them.
    const sdp = this.pc.localDescription!.sdp;
    const cameras = this.cameraTracks.map(({ camera, transceiver }) => ({
      name: camera.name,
      mid: transceiver.mid!,
      width: camera.width,
      height: camera.height,
    }));
    this.move("awaiting-answer");
    this.send({ type: "offer", sdp, cameras });
  }

  private async onMessage(text: string): Promise<void> {
    let message: ClientMessage;
    try {
      message = parseClientMessage(text);
    } catch (error) {
      this.send({ type: "error", message: (error as Error).message });
      return;
    }
    if (message.type === "answer") {
      if (this.current !== "awaiting-answer") {
        this.send({ type: "error", message: `an answer is only expected once, after the offer; this viewer is ${this.current}` });
        return;
      }
      this.move("connecting");
      try {
        await this.pc.setRemoteDescription({ type: "answer", sdp: message.sdp });
      } catch (error) {
        this.fail(`the answer was refused: ${(error as Error).message}`);
      }
      return;
    }
    if (this.current === "closed") return;
    const { candidate } = message;
    // Not passed on to werift:
    // - the end of the browser's candidates: told that no more come, werift stops waiting while it
    //   has no pair, though the browser's checks, which make peer-reflexive pairs, may still be on
    //   their way; ICE then fails. The connect timeout ends a viewer that never connects.
    // - mDNS names (`<uuid>.local`, what browsers give without camera permission): werift would open
    //   a multicast DNS socket on the coordinator and hold the pair up to 10 s per name, while the
    //   browser's checks to our host candidates find the path anyway.
    if (candidate === null || /\s\S+\.local\s/.test(candidate.candidate)) return;
    try {
      // Before the answer, werift holds the candidate until the remote description is set.
      await this.pc.addIceCandidate(candidate);
    } catch (error) {
      // One unusable candidate (an unresolvable mDNS name, say) is no reason to end the session.
      this.options.logger.warn(`WebRTC viewer of cell ${this.cellId}: candidate ignored: ${(error as Error).message}`);
    }
  }

  private onConnectionState(state: RTCPeerConnection["connectionState"]): void {
    if (this.current === "closed") return;
    if (state === "connected" && this.current === "connecting") {
      this.move("connected");
      clearTimeout(this.connectTimer);
      for (const cameraTrack of this.cameraTracks) this.attachFeed(cameraTrack);
    } else if (state === "failed") {
      this.fail("the peer connection failed (ICE or DTLS)");
    } else if (state === "closed") {
      void this.close();
    }
  }

  /** Forwards the camera's RTP to the track, from the first keyframe on (anything earlier cannot be decoded). */
  private attachFeed({ camera, track }: CameraTrack): void {
    let awaitingKeyframe = true;
    const detach = this.options.feeds.attach(this.cellId, camera, (packet) => {
      // A packet of our own: werift's sender rewrites the header in place, and the buffer is shared.
      const rtp = RtpPacket.deSerialize(packet);
      if (awaitingKeyframe) {
        if (!Vp8RtpPayload.deSerialize(rtp.payload).isKeyframe) return;
        awaitingKeyframe = false;
      }
      track.writeRtp(rtp);
    });
    this.releases.push(detach);
  }

  private watchState(): void {
    if (this.current === "closed") return;
    const channel = this.stateChannel;
    const unwatch = this.options.hub.watchState(this.cellId, (event) => {
      if (channel.readyState !== "open" || channel.bufferedAmount > MAX_STATE_BUFFERED_BYTES) {
        this.droppedStateEvents++;
        return;
      }
      channel.send(JSON.stringify(event));
    });
    this.releases.push(unwatch);
  }

  private fail(message: string): void {
    if (this.current === "closed") return;
    this.options.logger.warn(`WebRTC viewer of cell ${this.cellId}: ${message}`);
    this.send({ type: "error", message });
    void this.close(CLOSE_CODES.failed, "failed");
  }

  private send(message: ServerMessage): void {
    const { ws } = this.options;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  }
}

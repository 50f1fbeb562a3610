/**
 * The WebRTC live view end to end: a fake CellStreamHub (JPEG frames with the frame number drawn
 * in as a barcode, live state events) behind the real signalling on an HTTP + WebSocket server on
 * 127.0.0.1, real ffmpeg encoders, and headless Chromium as the viewer, which negotiates over the
 * socket, plays each camera in a <video> and reads the barcode of every frame it shows.
 *
 * Latency figure printed (not asserted): for each frame the page presents, the time from the
 * hub's `capturedAtMs` to the frame's `presentationTime` (requestVideoFrameCallback metadata, when
 * the compositor got it), both on this machine's wall clock. It spans the gate, ffmpeg (JPEG
 * decode and VP8 encode), werift, the network stack, Chromium's jitter buffer, decode and paint.
 * `receiveTime` (last packet of the frame received) splits it into send and play-out.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import chromium from "@sparticuz/chromium";
import jpeg from "jpeg-js";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { WebSocket, WebSocketServer } from "ws";
import type { CameraInfo, CellStateEvent, CellStreamHub, StreamFrame } from "../../coordinator/streams/cell-stream-hub.js";
import { createWebRtcSignalling, type WebRtcSignalling } from "../../coordinator/streams/webrtc/webrtc-signalling.js";
import { eventually } from "../support/eventually.js";

const CELL = "cell-x";
const CAMERAS: CameraInfo[] = [
  { name: "front", width: 320, height: 240, rateHz: 15 },
  { name: "wrist", width: 160, height: 120, rateHz: 15 },
];
/** Frame numbers are drawn modulo this (6 bits), so 64 JPEGs per camera are rendered once. */
const CODES = 64;
/** What the signalling logged as warnings and errors. */
const logged: string[] = [];
const logger = { info: () => undefined, warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) };

/**
 * A frame: a white and a black guard block then 6 bits of `code` (white = 1) in a band along the
 * top, below it a red square moving over a blue-green gradient.
 */
function renderFrame(width: number, height: number, code: number): Uint8Array {
  const data = Buffer.alloc(width * height * 4);
  const blockW = width / 8;
  const bandH = Math.round(height / 6);
  const squareX = Math.round((code / CODES) * (width - height / 4));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      let rgb: [number, number, number];
      if (y < bandH) {
        const block = Math.floor(x / blockW);
        const white = block === 0 || (block >= 2 && ((code >> (7 - block)) & 1) === 1);
        rgb = white ? [255, 255, 255] : [0, 0, 0];
      } else if (x >= squareX && x < squareX + height / 4 && y >= height / 2 && y < height / 2 + height / 4) {
        rgb = [230, 30, 30];
      } else {
        rgb = [20, Math.round((x / width) * 160), Math.round((y / height) * 200)];
      }
      data.set([...rgb, 255], o);
    }
  }
  return jpeg.encode({ data, width, height }, 85).data;
}

/** The hub side of a cell: frames at each camera's rate and state events, only while watched. */
class FakeHub implements CellStreamHub {
  readonly sent = new Map<string, Array<{ seq: number; capturedAtMs: number }>>();
  private readonly frames = new Map<string, Uint8Array[]>();
  private readonly cameraWatchers = new Map<string, Set<(frame: StreamFrame) => void>>();
  private readonly cameraTimers = new Map<string, ReturnType<typeof setInterval>>();
  private readonly stateWatchers = new Set<(event: CellStateEvent) => void>();
  private stateTimer: ReturnType<typeof setInterval> | undefined;

  constructor() {
    for (const camera of CAMERAS) {
      this.frames.set(camera.name, Array.from({ length: CODES }, (_, code) => renderFrame(camera.width, camera.height, code)));
      this.sent.set(camera.name, []);
    }
  }

  /** Open subscriptions: camera watchers plus state watchers. */
  get subscriptions(): number {
    let n = this.stateWatchers.size;
    for (const watchers of this.cameraWatchers.values()) n += watchers.size;
    return n;
  }

  cameras(cellId: string): CameraInfo[] {
    return cellId === CELL ? CAMERAS : [];
  }

  watchCamera(cellId: string, camera: string, onFrame: (frame: StreamFrame) => void): () => void {
    const info = CAMERAS.find((c) => c.name === camera);
    assert.ok(cellId === CELL && info, `watchCamera of an unknown camera ${cellId}/${camera}`);
    let watchers = this.cameraWatchers.get(camera);
    if (!watchers) this.cameraWatchers.set(camera, (watchers = new Set()));
    watchers.add(onFrame);
    if (!this.cameraTimers.has(camera)) {
      let seq = 0;
      const timer = setInterval(() => {
        const frame: StreamFrame = {
          cellId, camera, width: info.width, height: info.height,
          jpeg: this.frames.get(camera)![seq % CODES]!, capturedAtMs: Date.now(), seq,
        };
        this.sent.get(camera)!.push({ seq, capturedAtMs: frame.capturedAtMs });
        seq++;
        for (const watcher of this.cameraWatchers.get(camera) ?? []) watcher(frame);
      }, 1000 / info.rateHz);
      this.cameraTimers.set(camera, timer);
    }
    return () => {
      watchers.delete(onFrame);
      if (watchers.size === 0) {
        clearInterval(this.cameraTimers.get(camera));
        this.cameraTimers.delete(camera);
      }
    };
  }

  watchState(cellId: string, onState: (event: CellStateEvent) => void): () => void {
    assert.equal(cellId, CELL);
    this.stateWatchers.add(onState);
    onState({ type: "episode_started", t_ms: Date.now(), run_id: "run-1", episode_id: "ep-1", index: 0 });
    this.stateTimer ??= setInterval(() => {
      const t = Date.now();
      const event: CellStateEvent = { type: "joints", t_ms: t, names: ["shoulder", "elbow"], position_rad: [Math.sin(t / 1000), Math.cos(t / 1000)] };
      for (const watcher of this.stateWatchers) watcher(event);
    }, 100);
    return () => {
      this.stateWatchers.delete(onState);
      if (this.stateWatchers.size === 0) {
        clearInterval(this.stateTimer);
        this.stateTimer = undefined;
      }
    };
  }

  /** The capture time of the latest frame of `camera` with this code sent before `beforeMs`. */
  capturedAtOf(camera: string, code: number, beforeMs: number): number | undefined {
    const sent = this.sent.get(camera)!;
    for (let i = sent.length - 1; i >= 0; i--) {
      if (sent[i]!.seq % CODES === code && sent[i]!.capturedAtMs <= beforeMs) return sent[i]!.capturedAtMs;
    }
    return undefined;
  }
}

/** The viewer page: the signalling client a browser app would have, plus frame bookkeeping. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>cell view</title><body><script>
const view = (window.view = { offer: null, errors: [], states: [], streamIds: {}, frames: [], connection: "new", closeCode: null });
const cell = new URLSearchParams(location.search).get("cell");
const ws = new WebSocket("ws://" + location.host + "/streams/cells/" + encodeURIComponent(cell));
const pc = new RTCPeerConnection();
pc.onconnectionstatechange = () => (view.connection = pc.connectionState);
pc.onicecandidate = (e) => ws.send(JSON.stringify({ type: "candidate", candidate: e.candidate ? e.candidate.toJSON() : null }));
pc.ondatachannel = (e) => { e.channel.onmessage = (m) => view.states.push(JSON.parse(m.data)); };
function readCode(ctx, w, h) {
  const bw = w / 8, y = Math.floor(h / 12);
  const lum = (b) => { const d = ctx.getImageData(Math.floor(b * bw + bw / 2) - 1, y - 1, 3, 3).data; let s = 0; for (let k = 0; k < d.length; k += 4) s += d[k] + d[k + 1] + d[k + 2]; return s / 27; };
  const threshold = (lum(0) + lum(1)) / 2;
  let code = 0;
  for (let b = 2; b < 8; b++) code = code * 2 + (lum(b) > threshold ? 1 : 0);
  return code;
}
pc.ontrack = (e) => {
  const camera = view.offer.cameras.find((c) => c.mid === e.transceiver.mid);
  view.streamIds[camera.name] = e.streams[0] ? e.streams[0].id : null;
  const video = document.createElement("video");
  Object.assign(video, { id: camera.name, muted: true, autoplay: true, playsInline: true });
  video.srcObject = e.streams[0] || new MediaStream([e.track]);
  document.body.appendChild(video);
  const canvas = document.createElement("canvas");
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const onFrame = (now, meta) => {
    canvas.width = meta.width; canvas.height = meta.height;
    ctx.drawImage(video, 0, 0);
    view.frames.push({
      camera: camera.name, code: readCode(ctx, meta.width, meta.height), width: meta.width,
      presentedAtMs: performance.timeOrigin + meta.presentationTime,
      receivedAtMs: meta.receiveTime === undefined ? null : performance.timeOrigin + meta.receiveTime,
    });
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
};
ws.onmessage = async (m) => {
  const msg = JSON.parse(m.data);
  if (msg.type === "offer") {
    view.offer = msg;
    await pc.setRemoteDescription({ type: "offer", sdp: msg.sdp });
    await pc.setLocalDescription();
    ws.send(JSON.stringify({ type: "answer", sdp: pc.localDescription.sdp }));
  } else if (msg.type === "candidate") {
    await pc.addIceCandidate(msg.candidate);
  } else if (msg.type === "error") {
    view.errors.push(msg.message);
  }
};
ws.onclose = (e) => (view.closeCode = e.code);
</script>`;

interface PageView {
  offer: { type: "offer"; sdp: string; cameras: Array<{ name: string; mid: string; width: number; height: number }> } | null;
  errors: string[];
  states: Array<{ type: string }>;
  streamIds: Record<string, string | null>;
  frames: Array<{ camera: string; code: number; width: number; presentedAtMs: number; receivedAtMs: number | null }>;
  connection: string;
  closeCode: number | null;
}
declare global {
  interface Window {
    view: PageView;
  }
}

/** ffmpeg processes this test process started (the signalling spawns them directly). */
function ffmpegChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "ffmpeg" && ppid === process.pid) pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** UDP sockets this process has open (ICE, and the encoders' RTP sockets), from /proc. */
function udpSocketCount(): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      if (link.startsWith("socket:[")) inodes.add(link.slice("socket:[".length, -1));
    } catch {
      // closed while we looked
    }
  }
  let count = 0;
  for (const table of ["/proc/self/net/udp", "/proc/self/net/udp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const inode = line.trim().split(/\s+/)[9];
      if (inode !== undefined && inodes.has(inode)) count++;
    }
  }
  return count;
}

const CLOCK_TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat; 0 once it is gone. */
function processCpuS(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** CPU use over a window, as a share of one core, of this process, the ffmpeg children and the browser. */
async function measureCpu(windowMs: number, browserPid: number | undefined): Promise<{ node: number; ffmpeg: number[]; browser: number }> {
  const encoders = ffmpegChildren();
  const node0 = process.cpuUsage();
  const ffmpeg0 = encoders.map(processCpuS);
  const browser0 = browserPid ? processCpuS(browserPid) : 0;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const elapsedS = (performance.now() - started) / 1000;
  const node = process.cpuUsage(node0);
  return {
    node: (node.user + node.system) / 1e6 / elapsedS,
    ffmpeg: encoders.map((pid, i) => (processCpuS(pid) - ffmpeg0[i]!) / elapsedS),
    browser: browserPid ? (processCpuS(browserPid) - browser0) / elapsedS : 0,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Glass-to-glass figures of the frames the page presented since `fromIndex`. */
function latencyReport(hub: FakeHub, view: PageView, fromIndex: number): string {
  const lines: string[] = [];
  for (const camera of CAMERAS) {
    const total: number[] = [];
    const send: number[] = [];
    for (const frame of view.frames.slice(fromIndex).filter((f) => f.camera === camera.name)) {
      const capturedAtMs = hub.capturedAtOf(camera.name, frame.code, frame.presentedAtMs);
      if (capturedAtMs === undefined) continue;
      total.push(frame.presentedAtMs - capturedAtMs);
      if (frame.receivedAtMs !== null) send.push(frame.receivedAtMs - capturedAtMs);
    }
    total.sort((a, b) => a - b);
    send.sort((a, b) => a - b);
    const fmt = (xs: number[]) =>
      xs.length ? `median ${percentile(xs, 0.5).toFixed(0)} ms, p90 ${percentile(xs, 0.9).toFixed(0)} ms, max ${xs[xs.length - 1]!.toFixed(0)} ms` : "n/a";
    lines.push(`  ${camera.name} ${camera.width}x${camera.height}: ${total.length} frames; captured -> presented ${fmt(total)}; captured -> received ${fmt(send)}`);
  }
  return lines.join("\n");
}

describe("WebRTC live view in headless Chromium", function () {
  this.timeout(60_000);
  let hub: FakeHub;
  let signalling: WebRtcSignalling;
  let server: Server;
  let baseUrl: string;
  let browser: Browser;

  before(async () => {
    hub = new FakeHub();
    signalling = createWebRtcSignalling({ hub, logger });
    const wss = new WebSocketServer({ noServer: true });
    server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    });
    server.on("upgrade", (req, socket, head) => {
      const match = /^\/streams\/cells\/([^/?]+)/.exec(req.url ?? "");
      if (!match) return socket.destroy();
      // Here the coordinator authenticates; the test lets everyone in.
      wss.handleUpgrade(req, socket, head, (ws) => signalling.handle(ws, decodeURIComponent(match[1]!)));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await puppeteer.launch({
      args: [...chromium.args, "--autoplay-policy=no-user-gesture-required"],
      executablePath: await chromium.executablePath(),
      headless: true,
    });
  });

  after(async () => {
    await browser?.close();
    await signalling?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    assert.deepEqual(ffmpegChildren(), [], "no encoder outlives the suite");
  });

  async function openViewer(): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${baseUrl}/?cell=${CELL}`);
    return page;
  }

  async function waitPlaying(page: Page): Promise<void> {
    await page.waitForFunction(
      (names: string[]) =>
        names.every((name) => {
          const video = document.getElementById(name) as HTMLVideoElement | null;
          return video !== null && video.videoWidth > 0 && video.currentTime > 0;
        }),
      { timeout: 15_000 },
      CAMERAS.map((c) => c.name),
    );
  }

  async function currentTimes(page: Page): Promise<number[]> {
    return page.evaluate((names: string[]) => names.map((name) => (document.getElementById(name) as HTMLVideoElement).currentTime), CAMERAS.map((c) => c.name));
  }

  it("plays every camera at its size, delivers state, and releases everything when the page closes", async () => {
    const udpSocketsBefore = udpSocketCount();
    const page = await openViewer();
    const offer = (await (await page.waitForFunction(() => window.view.offer, { timeout: 10_000 })).jsonValue())!;
    assert.deepEqual(
      offer.cameras.map(({ name, width, height }) => ({ name, width, height })),
      CAMERAS.map(({ name, width, height }) => ({ name, width, height })),
    );
    assert.equal(new Set(offer.cameras.map((c) => c.mid)).size, CAMERAS.length, "one m-line per camera");
    assert.match(offer.sdp, /a=sendonly/);
    assert.match(offer.sdp, /VP8\/90000/);
    assert.match(offer.sdp, /a=candidate:/, "the offer carries the coordinator's candidates");

    const connectedAt = performance.now();
    await waitPlaying(page);
    const firstPictureMs = performance.now() - connectedAt;
    const sizes = await page.evaluate((names: string[]) => names.map((name) => {
      const video = document.getElementById(name) as HTMLVideoElement;
      return [video.videoWidth, video.videoHeight];
    }), CAMERAS.map((c) => c.name));
    assert.deepEqual(sizes, CAMERAS.map((c) => [c.width, c.height]));
    const view = await page.evaluate(() => window.view);
    assert.deepEqual(view.streamIds, { front: "front", wrist: "wrist" });
    assert.deepEqual(view.errors, []);

    // The pictures move on.
    const before = await currentTimes(page);
    await page.waitForFunction(
      (names: string[], t0: number[]) => names.every((name, i) => (document.getElementById(name) as HTMLVideoElement).currentTime > t0[i]! + 0.3),
      { timeout: 5_000 },
      CAMERAS.map((c) => c.name),
      before,
    );

    // State events arrive as JSON on the data channel.
    await page.waitForFunction(() => window.view.states.filter((s) => s.type === "joints").length >= 3, { timeout: 5_000 });
    const states = await page.evaluate(() => window.view.states);
    assert.equal(states[0]!.type, "episode_started");
    assert.deepEqual(Object.keys(states.find((s) => s.type === "joints")!).sort(), ["names", "position_rad", "t_ms", "type"]);

    assert.equal(signalling.viewers(CELL), 1);
    assert.equal(signalling.viewers(), 1);
    assert.equal(hub.subscriptions, CAMERAS.length + 1, "each camera and the state, once");
    assert.equal(ffmpegChildren().length, CAMERAS.length, "one encoder per camera");

    const framesFrom = view.frames.length;
    const cpu = await measureCpu(3000, browser.process()?.pid);
    const after = await page.evaluate(() => window.view);
    const decodedCodes = after.frames.slice(framesFrom).filter((f) => f.camera === "front").map((f) => f.code);
    assert.ok(decodedCodes.length >= 20, `the page presented ${decodedCodes.length} front frames in 3 s`);
    console.log(
      `    one viewer, first picture ${firstPictureMs.toFixed(0)} ms after the offer\n${latencyReport(hub, after, framesFrom)}\n` +
        `    CPU (share of one core): node ${cpu.node.toFixed(3)}, ffmpeg ${cpu.ffmpeg.map((x) => x.toFixed(3)).join(" + ")}, chromium ${cpu.browser.toFixed(3)}`,
    );

    await page.close();
    await eventually("the viewer, its subscriptions, its encoders and its sockets to be gone", () =>
      signalling.viewers() === 0 && hub.subscriptions === 0 && ffmpegChildren().length === 0 && udpSocketCount() === udpSocketsBefore, { deadlineMs: 10_000 });
    assert.deepEqual(logged, [], "a viewer coming and going is nothing to warn about");
  });

  it("shares one encoder per camera among viewers, and keeps it while one still watches", async () => {
    const udpSocketsBefore = udpSocketCount();
    const first = await openViewer();
    await waitPlaying(first);
    const second = await openViewer();
    await waitPlaying(second);
    assert.equal(signalling.viewers(CELL), 2);
    assert.equal(ffmpegChildren().length, CAMERAS.length, "still one encoder per camera");
    assert.equal(hub.subscriptions, CAMERAS.length + 2, "each camera once; the state once per data channel");
    const cpu = await measureCpu(3000, browser.process()?.pid);
    console.log(`    two viewers, CPU (share of one core): node ${cpu.node.toFixed(3)}, ffmpeg ${cpu.ffmpeg.map((x) => x.toFixed(3)).join(" + ")}, chromium ${cpu.browser.toFixed(3)}`);

    await first.close();
    await eventually("the first viewer to be gone", () => signalling.viewers(CELL) === 1, { deadlineMs: 10_000 });
    assert.equal(ffmpegChildren().length, CAMERAS.length, "the encoders stay for the second viewer");
    const before = await currentTimes(second);
    await second.waitForFunction(
      (names: string[], t0: number[]) => names.every((name, i) => (document.getElementById(name) as HTMLVideoElement).currentTime > t0[i]! + 0.3),
      { timeout: 5_000 },
      CAMERAS.map((c) => c.name),
      before,
    );
    await second.close();
    await eventually("everything to be released", () =>
      signalling.viewers() === 0 && hub.subscriptions === 0 && ffmpegChildren().length === 0 && udpSocketCount() === udpSocketsBefore, { deadlineMs: 10_000 });
    assert.deepEqual(logged, []);
  });

  it("refuses a cell with no cameras: an error, then close code 4404", async () => {
    const ws = new WebSocket(`${baseUrl.replace("http", "ws")}/streams/cells/cell-gone`);
    const messages: unknown[] = [];
    ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
    const code = await new Promise<number>((resolve) => ws.on("close", resolve));
    assert.equal(code, 4404);
    assert.equal(messages.length, 1);
    assert.match((messages[0] as { type: string; message: string }).message, /cell "cell-gone" has no cameras/);
    assert.equal(signalling.viewers(), 0);
  });

  it("answers a bad message with an error and goes on; closing the socket before connecting releases the viewer", async () => {
    const ws = new WebSocket(`${baseUrl.replace("http", "ws")}/streams/cells/${CELL}`);
    const messages: Array<{ type: string; message?: string }> = [];
    const next = () => new Promise<{ type: string; message?: string }>((resolve) => ws.once("message", (data) => resolve(JSON.parse(data.toString()))));
    ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
    assert.equal((await next()).type, "offer");
    ws.send(JSON.stringify({ type: "answer" }));
    assert.deepEqual(await next(), { type: "error", message: 'invalid "answer" message: sdp: Invalid input: expected string, received undefined' });
    ws.send("hello");
    assert.match((await next()).message!, /messages must be JSON objects; got "hello"/);
    ws.send(JSON.stringify({ type: "renegotiate" }));
    assert.match((await next()).message!, /message type must be "answer" or "candidate"; got "renegotiate"/);
    assert.equal(signalling.viewers(CELL), 1);
    assert.equal(hub.subscriptions, 0, "nothing is watched before the peer connects");
    ws.close();
    await eventually("the viewer to be released", () => signalling.viewers() === 0, { deadlineMs: 5_000 });
  });

  it("restarts an encoder that died, and the viewer's picture goes on", async () => {
    const page = await openViewer();
    await waitPlaying(page);
    const killed = ffmpegChildren();
    for (const pid of killed) process.kill(pid, "SIGKILL");
    const killedAtMs = Date.now();
    await eventually("new encoders", () => {
      const now = ffmpegChildren();
      return now.length === CAMERAS.length && now.every((pid) => !killed.includes(pid));
    }, { deadlineMs: 10_000 });
    // Frames captured after the restart are presented: the receiver took the new stream as the old one's continuation.
    await page.waitForFunction(
      (names: string[], sinceMs: number) => names.every((name) => window.view.frames.filter((f) => f.camera === name && f.presentedAtMs > sinceMs + 1500).length >= 10),
      { timeout: 10_000 },
      CAMERAS.map((c) => c.name),
      killedAtMs,
    );
    assert.ok(logged.some((m) => /WebRTC feed of cell cell-x camera front: ffmpeg \(VP8 encoder\) exited with SIGKILL.*restarting in 1000 ms/.test(m)), logged.join("\n"));
    await page.close();
    await eventually("everything to be released", () =>
      signalling.viewers() === 0 && hub.subscriptions === 0 && ffmpegChildren().length === 0, { deadlineMs: 10_000 });
  });

  it("close() ends every viewer with 1001 and stops the encoders", async () => {
    const page = await openViewer();
    await waitPlaying(page);
    await signalling.close();
    assert.equal(signalling.viewers(), 0);
    assert.deepEqual(ffmpegChildren(), []);
    assert.equal(hub.subscriptions, 0);
    await page.waitForFunction(() => window.view.closeCode !== null, { timeout: 5_000 });
    assert.equal(await page.evaluate(() => window.view.closeCode), 1001);
    await page.close();
  });
});

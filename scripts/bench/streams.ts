/**
 * Live streams: what watching costs and how fresh the pictures are. One simulated so101 cell paced
 * at real time (so its control loop runs on the wall clock and its jitter means something) runs the
 * README policy for two episodes with nobody watching, then again with 4 MJPEG viewers (two per
 * camera), with 1 WebRTC viewer and with 4 (pages in headless Chromium playing every camera), and
 * prints for each phase the control loop's wake-up lateness (the agent's own
 * `assay_agent_control_jitter_seconds`, read from the cell's /metrics; on simulated time it is 0 by
 * construction, so the cell process's event-loop delay, `assay_agent_event_loop_delay_seconds`, is
 * the figure that says whether watching could delay a real cell's loop), missed periods, and the
 * CPU of the cell process and of the coordinator (with its ffmpeg encoders); then frame latency
 * from render on the cell to the viewer: for MJPEG to the part's arrival (its X-Captured-At-Ms),
 * for WebRTC to the frame's presentation in Chromium after decode (the cell burns its render time
 * into each picture, simulators/render/timecode.ts, and the page reads it off every frame it
 * presents: requestVideoFrameCallback's presentationTime); and the server CPU each viewer adds.
 * The browser's own CPU is printed apart: on a 2-core machine it competes with the cell.
 *
 *   npx tsx scripts/bench/streams.ts
 */
import { readdirSync, readFileSync } from "node:fs";
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser } from "puppeteer-core";
import { pathToFileURL } from "node:url";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../../test/fixtures.js";
import { runEnd, startTestService, type TestService } from "../../test/integration/helpers.js";
import { eventually } from "../../test/support/eventually.js";
import type { Figure } from "../bench.js";
import { TIMECODE_BITS, TIMECODE_BLOCKS } from "../../simulators/render/timecode.js";
import { processCpuMs, treeCpuMs } from "./process-cpu.js";
import { quantile } from "./quantiles.js";

const BENCH = "streams";
const CELL = "so101-b";
const VIEWERS = 4;

/** CPU of the ffmpeg encoders this process started, by pid (they come and go with WebRTC viewers). */
function encoderCpuMs(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "ffmpeg" && ppid === process.pid) cpu.set(Number(entry), processCpuMs(Number(entry)));
    } catch {
      // exited while we looked
    }
  }
  return cpu;
}

async function jitter(controlUrl: string): Promise<{ sumS: number; count: number; over1ms: number; missed: number; loopDelayP99Ms: number; loopDelayMaxMs: number }> {
  const text = await (await fetch(`${controlUrl}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    sumS: value(/^assay_agent_control_jitter_seconds_sum\{[^}]*\} ([\d.e+-]+)$/m),
    count: value(/^assay_agent_control_jitter_seconds_count\{[^}]*\} ([\d.e+-]+)$/m),
    over1ms: value(/^assay_agent_control_jitter_seconds_count\{[^}]*\} ([\d.e+-]+)$/m) - value(/^assay_agent_control_jitter_seconds_bucket\{le="0.001"[^}]*\} ([\d.e+-]+)$/m),
    missed: value(/^assay_agent_control_missed_periods_total\{[^}]*\} ([\d.e+-]+)$/m),
    loopDelayP99Ms: value(/^assay_agent_event_loop_delay_seconds\{quantile="0.99"[^}]*\} ([\d.e+-]+)$/m) * 1000,
    loopDelayMaxMs: value(/^assay_agent_event_loop_delay_seconds\{quantile="1"[^}]*\} ([\d.e+-]+)$/m) * 1000,
  };
}

/** Reads MJPEG parts until aborted, recording each frame's latency (arrival - X-Captured-At-Ms). */
async function view(url: string, signal: AbortSignal, latenciesMs: number[]): Promise<void> {
  const response = await fetch(url, { signal }).catch(() => undefined);
  if (!response?.body) return;
  const reader = response.body.getReader();
  let buffer = Buffer.alloc(0);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const now = Date.now();
      buffer = Buffer.concat([buffer, Buffer.from(value)]);
      for (;;) {
        const header = /Content-Length: (\d+)\r\nX-Captured-At-Ms: (\d+)\r\n\r\n/.exec(buffer.toString("latin1"));
        if (!header) break;
        const end = header.index + header[0].length + Number(header[1]);
        if (buffer.length < end) break;
        latenciesMs.push(now - Number(header[2]));
        buffer = buffer.subarray(end);
      }
    }
  } catch {
    // aborted
  }
}

/** Viewers of one phase: started before the run, stopped after it; `cpuMs` is their own CPU so far (browsers). */
interface Viewers {
  stop(): Promise<void>;
  cpuMs(): number;
}

const NO_VIEWERS: Viewers = { stop: async () => undefined, cpuMs: () => 0 };

function mjpegViewers(urls: string[], latenciesMs: number[]): Viewers {
  const abort = new AbortController();
  const viewers = urls.map((url) => view(url, abort.signal, latenciesMs));
  return {
    stop: async () => {
      abort.abort();
      await Promise.all(viewers);
    },
    cpuMs: () => 0,
  };
}

/**
 * The viewer page: connects to a signalling URL, plays every camera, and for each frame it presents
 * reads the timecode band (the reader of simulators/render/timecode.ts, on the canvas) to log the
 * frame's age: presentation time minus render time on the cell, both on this machine's clock.
 */
const PAGE = `<!doctype html><meta charset="utf-8"><title>bench viewer</title><body><script>
const BITS = ${TIMECODE_BITS}, BLOCKS = ${TIMECODE_BLOCKS};
window.view = { latencies: [], errors: [], connection: "new" };
function readTimecode(ctx, w, h, nowMs) {
  const y = Math.floor(Math.max(8, Math.round(h / 12)) / 2);
  const luma = (block) => { const d = ctx.getImageData(Math.floor(((block + 0.5) * w) / BLOCKS), y, 1, 1).data; return (d[0] + d[1] + d[2]) / 3; };
  const threshold = (luma(0) + luma(1)) / 2;
  let code = 0;
  for (let b = 2; b < BLOCKS; b++) code = code * 2 + (luma(b) > threshold ? 1 : 0);
  const period = 2 ** BITS;
  return Math.floor(nowMs) - ((((Math.floor(nowMs) - code) % period) + period) % period);
}
window.connect = (url) => {
  const view = window.view;
  const ws = new WebSocket(url);
  const pc = new RTCPeerConnection();
  pc.onconnectionstatechange = () => (view.connection = pc.connectionState);
  pc.onicecandidate = (e) => ws.send(JSON.stringify({ type: "candidate", candidate: e.candidate ? e.candidate.toJSON() : null }));
  pc.ontrack = (e) => {
    const video = document.createElement("video");
    Object.assign(video, { muted: true, autoplay: true, playsInline: true });
    video.srcObject = e.streams[0] || new MediaStream([e.track]);
    document.body.appendChild(video);
    const canvas = document.createElement("canvas");
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    const onFrame = (now, meta) => {
      canvas.width = meta.width; canvas.height = meta.height;
      ctx.drawImage(video, 0, 0);
      const presentedAtMs = performance.timeOrigin + meta.presentationTime;
      view.latencies.push(presentedAtMs - readTimecode(ctx, meta.width, meta.height, presentedAtMs));
      video.requestVideoFrameCallback(onFrame);
    };
    video.requestVideoFrameCallback(onFrame);
  };
  ws.onmessage = async (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "offer") {
      await pc.setRemoteDescription({ type: "offer", sdp: msg.sdp });
      await pc.setLocalDescription();
      ws.send(JSON.stringify({ type: "answer", sdp: pc.localDescription.sdp }));
    } else if (msg.type === "candidate") await pc.addIceCandidate(msg.candidate);
    else if (msg.type === "error") view.errors.push(msg.message);
  };
};
</script>`;

/** `count` pages each playing every camera of the signalling URL; their frame ages go to `latenciesMs`. */
async function webrtcViewers(browser: Browser, url: string, count: number, latenciesMs: number[]): Promise<Viewers> {
  const pages = await Promise.all(Array.from({ length: count }, () => browser.newPage()));
  for (const page of pages) {
    await page.setContent(PAGE);
    await page.evaluate((u: string) => (window as any).connect(u), url);
  }
  // Counted from the first presented frame: connection set-up is not a frame's latency.
  await Promise.all(pages.map((page) => page.waitForFunction(() => (window as any).view.latencies.length > 0, { timeout: 60_000 })));
  const browserPid = browser.process()!.pid!;
  return {
    stop: async () => {
      for (const page of pages) {
        const { latencies, errors } = (await page.evaluate(() => (window as any).view)) as { latencies: number[]; errors: string[] };
        if (errors.length > 0) throw new Error(`the viewer page saw errors: ${errors.join("; ")}`);
        latenciesMs.push(...latencies.slice(1));
        await page.close();
      }
    },
    cpuMs: () => treeCpuMs(browserPid),
  };
}

function sumCpu(cpu: Map<number, number>, since: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of cpu) total += ms - (since.get(pid) ?? 0);
  return total;
}

async function phase(service: TestService, controlUrl: string, cellPid: number, startViewers: () => Promise<Viewers>) {
  const viewers = await startViewers();
  const before = {
    jitter: await jitter(controlUrl), cellCpuMs: processCpuMs(cellPid), coordinatorCpu: process.cpuUsage(),
    encoders: encoderCpuMs(), viewerCpuMs: viewers.cpuMs(), atMs: performance.now(),
  };
  const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } })).json()) as { id: string };
  const { run } = await runEnd(service, created.id);
  if (run.status !== "completed") throw new Error(`bench run ended ${run.status}`);
  const after = {
    jitter: await jitter(controlUrl), cellCpuMs: processCpuMs(cellPid), coordinatorCpu: process.cpuUsage(before.coordinatorCpu),
    encoders: encoderCpuMs(), viewerCpuMs: viewers.cpuMs(), atMs: performance.now(),
  };
  await viewers.stop();
  const seconds = (after.atMs - before.atMs) / 1000;
  const steps = after.jitter.count - before.jitter.count;
  const pct = (ms: number) => (ms / 1000 / seconds) * 100;
  return {
    meanJitterMs: ((after.jitter.sumS - before.jitter.sumS) / steps) * 1000,
    over1msPct: ((after.jitter.over1ms - before.jitter.over1ms) / steps) * 100,
    missed: after.jitter.missed - before.jitter.missed,
    // Reset at every scrape: `after` covers exactly this phase.
    loopDelayP99Ms: after.jitter.loopDelayP99Ms,
    loopDelayMaxMs: after.jitter.loopDelayMaxMs,
    cellCpuPct: pct(after.cellCpuMs - before.cellCpuMs),
    coordinatorCpuPct: pct((after.coordinatorCpu.user + after.coordinatorCpu.system) / 1000 + sumCpu(after.encoders, before.encoders)),
    browserCpuPct: pct(after.viewerCpuMs - before.viewerCpuMs),
    steps,
  };
}

export async function run(): Promise<Figure[]> {
  const service = await startTestService({ cells: [CELL], simSpeed: 1, simTimecode: true });
  const figures: Figure[] = [];
  const figure = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric, value: Number(value.toFixed(3)), unit });
  let browser: Browser | undefined;
  try {
    const status = service.fleet!.status().find((s) => s.cell === CELL)!;
    const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["streams:read"], new Date())).secret;
    const descriptor = await eventually(`${CELL} to connect with its cameras`, async () => {
      const d = (await (await service.api(`/v1/streams/${CELL}`, { headers: { authorization: `Bearer ${operator}` } })).json()) as {
        cameras: Array<{ name: string; mjpeg_url: string }>;
        webrtc: { url: string };
      };
      return d.cameras.length > 0 && d;
    });
    browser = await puppeteer.launch({ args: chromium.args, executablePath: await chromium.executablePath(), headless: true });
    const urls = Array.from({ length: VIEWERS }, (_, i) => descriptor.cameras[i % descriptor.cameras.length]!.mjpeg_url);
    const mjpegMs: number[] = [];
    const webrtc1Ms: number[] = [];
    const webrtc4Ms: number[] = [];
    const phases = [
      ["0_viewers", await phase(service, status.controlUrl!, status.pid!, async () => NO_VIEWERS)],
      [`${VIEWERS}_mjpeg_viewers`, await phase(service, status.controlUrl!, status.pid!, async () => mjpegViewers(urls, mjpegMs))],
      ["1_webrtc_viewer", await phase(service, status.controlUrl!, status.pid!, () => webrtcViewers(browser!, descriptor.webrtc.url, 1, webrtc1Ms))],
      [`${VIEWERS}_webrtc_viewers`, await phase(service, status.controlUrl!, status.pid!, () => webrtcViewers(browser!, descriptor.webrtc.url, VIEWERS, webrtc4Ms))],
    ] as const;
    const idle = phases[0][1];
    for (const [name, p] of phases) {
      figure(`control_jitter_mean_${name}`, p.meanJitterMs, "ms");
      figure(`control_steps_late_over_1ms_${name}`, p.over1msPct, "%");
      figure(`missed_periods_${name}`, p.missed, "count");
      figure(`cell_event_loop_delay_p99_${name}`, p.loopDelayP99Ms, "ms");
      figure(`cell_event_loop_delay_max_${name}`, p.loopDelayMaxMs, "ms");
      figure(`cell_cpu_${name}`, p.cellCpuPct, "% of a core");
      figure(`coordinator_cpu_${name}`, p.coordinatorCpuPct, "% of a core");
      if (p.browserCpuPct > 0) figure(`browser_cpu_${name}`, p.browserCpuPct, "% of a core");
    }
    const perViewer = (p: (typeof phases)[number][1], viewers: number) =>
      (p.cellCpuPct + p.coordinatorCpuPct - idle.cellCpuPct - idle.coordinatorCpuPct) / viewers;
    for (const [name, all] of [["mjpeg", mjpegMs], ["webrtc_1_viewer", webrtc1Ms], [`webrtc_${VIEWERS}_viewers`, webrtc4Ms]] as const) {
      // A timecode misread (a frame caught mid-transition) gives an age outside any plausible one.
      const latencies = all.filter((ms) => ms >= 0 && ms < 5000).sort((a, b) => a - b);
      figure(`${name}_frames`, latencies.length, "count");
      if (latencies.length < all.length) figure(`${name}_frames_unreadable`, all.length - latencies.length, "count");
      figure(`${name}_latency_p50`, quantile(latencies, 0.5), "ms");
      figure(`${name}_latency_p99`, quantile(latencies, 0.99), "ms");
    }
    figure("mjpeg_server_cpu_per_viewer", perViewer(phases[1][1], VIEWERS), "% of a core");
    figure("webrtc_server_cpu_1_viewer", perViewer(phases[2][1], 1), "% of a core");
    figure("webrtc_server_cpu_per_viewer_of_4", perViewer(phases[3][1], VIEWERS), "% of a core");
  } finally {
    await browser?.close();
    await service.stop();
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const f of await run()) console.log(JSON.stringify(f));
}

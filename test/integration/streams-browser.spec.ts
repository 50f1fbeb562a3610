/**
 * A live view end to end, in headless Chromium (from npm): a customer submits a run, takes the
 * signalling URL from the run's own status event, and a page connects to it. The simulated cell's
 * cameras arrive as playing VP8 tracks of the cameras' size (frames from the cell's LiveFeed, through
 * the coordinator's hub and encoder), the data channel carries the cell's live state, and the top
 * camera shows the arm (its white links) while the episode runs. The frame is saved as a PNG.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { readSse } from "../support/sse.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const PAGE = `<!doctype html><meta charset="utf-8"><title>cell view</title><body><script>
window.view = { offer: null, errors: [], states: [], connection: "new" };
window.connect = (url) => {
  const view = window.view;
  const ws = new WebSocket(url);
  const pc = new RTCPeerConnection();
  pc.onconnectionstatechange = () => (view.connection = pc.connectionState);
  pc.onicecandidate = (e) => ws.send(JSON.stringify({ type: "candidate", candidate: e.candidate ? e.candidate.toJSON() : null }));
  pc.ondatachannel = (e) => { e.channel.onmessage = (m) => view.states.push(JSON.parse(m.data)); };
  pc.ontrack = (e) => {
    const camera = view.offer.cameras.find((c) => c.mid === e.transceiver.mid);
    const video = document.createElement("video");
    Object.assign(video, { id: camera.name, muted: true, autoplay: true, playsInline: true });
    video.srcObject = e.streams[0] || new MediaStream([e.track]);
    document.body.appendChild(video);
  };
  ws.onmessage = async (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "offer") {
      view.offer = msg;
      await pc.setRemoteDescription({ type: "offer", sdp: msg.sdp });
      await pc.setLocalDescription();
      ws.send(JSON.stringify({ type: "answer", sdp: pc.localDescription.sdp }));
    } else if (msg.type === "candidate") await pc.addIceCandidate(msg.candidate);
    else if (msg.type === "error") view.errors.push(msg.message);
  };
};
/** The share of near-white pixels (the arm's links) in a camera's current picture, and the picture as a PNG data URL. */
window.whiteShare = (name) => {
  const video = document.getElementById(name);
  const canvas = document.createElement("canvas");
  canvas.width = video.videoWidth; canvas.height = video.videoHeight;
  const ctx = canvas.getContext("2d");
  ctx.drawImage(video, 0, 0);
  const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  let white = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] > 200 && d[i + 1] > 200 && d[i + 2] > 200) white++;
  return { share: white / (d.length / 4), png: canvas.toDataURL("image/png") };
};
</script>`;

/** Waits until the page plays every camera at its advertised size, with no error and the peer connected. */
async function playsEveryCamera(page: Page, cameras: Array<{ name: string; width: number; height: number }>): Promise<void> {
  await page.waitForFunction(
    (names: string[]) => names.every((name) => {
      const video = document.getElementById(name) as HTMLVideoElement | null;
      return video !== null && video.videoWidth > 0 && video.currentTime > 0;
    }),
    { timeout: 30_000 },
    cameras.map((c) => c.name),
  ).catch(async (error) => {
    throw new Error(`${error.message}; page state ${JSON.stringify(await page.evaluate(() => ({ ...(window as any).view, offer: Boolean((window as any).view.offer), videos: [...document.querySelectorAll("video")].map((v) => [v.id, v.videoWidth, v.currentTime]) })))}`);
  });
  const view = (await page.evaluate(() => (window as any).view)) as Json;
  assert.deepEqual(view.errors, []);
  assert.equal(view.connection, "connected");
  for (const camera of cameras) {
    const size = await page.evaluate((name: string) => {
      const video = document.getElementById(name) as HTMLVideoElement;
      return [video.videoWidth, video.videoHeight];
    }, camera.name);
    assert.deepEqual(size, [camera.width, camera.height], camera.name);
  }
}

describe("live view in a real browser (simulated fleet, headless Chromium)", function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: BrowserTabs;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  before(async () => {
    browser = await openBrowserTabs();
  });
  after(async () => {
    await browser?.close();
  });

  it("plays the cell's cameras and state from the URL in the run's status event, and shows the arm", async () => {
    const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 30 } })).json()) as Json;
    const seen = await readSse(await service.api(`/v1/runs/${created.id}/events`), (e) => e.event === "status" && (e.data as Json).status === "running");
    const { cell, webrtc } = seen.at(-1)!.data as Json;
    const cameras = service.coordinator.live.cameras(cell);
    const page = await browser.newPage();
    try {
      await page.setContent(PAGE);
      await page.evaluate((url: string) => (window as any).connect(url), webrtc);
      await playsEveryCamera(page, cameras);
      const t0 = await page.evaluate(() => (document.getElementById("top") as HTMLVideoElement).currentTime);
      await page.waitForFunction((t: number) => (document.getElementById("top") as HTMLVideoElement).currentTime > t + 0.5, { timeout: 15_000 }, t0);
      // Live state on the data channel: the arm's joints while an episode runs.
      await page.waitForFunction(() => (window as any).view.states.some((s: Json) => s.type === "joints"), { timeout: 30_000 });
      const joints = ((await page.evaluate(() => (window as any).view.states)) as Json[]).find((s) => s.type === "joints")!;
      assert.equal(joints.names.length, 6);
      // The top camera shows the arm's white links once it reaches into view.
      const shot = await page.waitForFunction(() => {
        const { share, png } = (window as any).whiteShare("top");
        return share > 0.005 ? png : false;
      }, { timeout: 60_000, polling: 200 });
      const png = (await shot.jsonValue()) as string;
      assert.match(png, /^data:image\/png;base64,/);
      const { writeFileSync } = await import("node:fs");
      writeFileSync("/tmp/assay-live-top.png", Buffer.from(png.split(",")[1]!, "base64"));
    } finally {
      await page.close();
    }
    // The viewer left: the hub lets go of the cell. (The run is long so that it outlasts a slow browser start.)
    await eventually("the viewer to be gone", () => service.coordinator.live.watchers(cell) === 0);
    await service.coordinator.halt(created.id, "queue_timeout", "test done: the run only had to be watched");
    const { run } = await runEnd(service, created.id);
    assert.equal(run.status, "stopped");
    // Leave the shared fleet as found: the cell reports its cancelled episode, and the customer no longer sees it.
    await eventually("the cell to let go of the halted run", async () => (await service.api(`/v1/streams/${cell}`)).status === 404);
  });
  it("plays a pilot from its stream_url, which follows the pilot run to its cell", async () => {
    const task = (await (await service.api("/v1/tasks", {
      method: "POST",
      json: {
        name: "watched-pilot",
        initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], randomize: { x_mm: 20, y_mm: 20, yaw_deg: 20 } } },
        success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
      },
    })).json()) as Json;
    assert.match(task.id, /^task_/, JSON.stringify(task));
    const pilot = (await (await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 30 } })).json()) as Json;
    assert.match(pilot.stream_url, new RegExp(`^${service.coordinator.streamsUrl}/runs/${pilot.run_id}\\?token=`));
    // The URL names the run, not a cell: it works once the pilot is on a cell, wherever that is.
    const seen = await readSse(await service.api(`/v1/runs/${pilot.run_id}/events`), (e) => e.event === "status" && (e.data as Json).status === "running");
    const { cell } = seen.at(-1)!.data as Json;
    const cameras = service.coordinator.live.cameras(cell);
    const page = await browser.newPage();
    try {
      await page.setContent(PAGE);
      await page.evaluate((url: string) => (window as any).connect(url), pilot.stream_url);
      await playsEveryCamera(page, cameras);
      await page.waitForFunction(() => (window as any).view.states.some((s: Json) => s.type === "joints"), { timeout: 30_000 });
    } finally {
      await page.close();
    }
    await eventually("the viewer to be gone", () => service.coordinator.live.watchers(cell) === 0);
    await service.coordinator.halt(pilot.run_id, "queue_timeout", "test done: the pilot only had to be watched");
    const { run } = await runEnd(service, pilot.run_id);
    assert.equal(run.status, "stopped");
    await eventually("the cell to let go of the halted pilot", async () => (await service.api(`/v1/streams/${cell}`)).status === 404);
  });
  it("shows a camera's MJPEG stream in an <img> at the camera's size", async () => {
    const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["streams:read"], new Date())).secret;
    const d = (await (await service.api("/v1/streams/so101-c", { headers: { authorization: `Bearer ${operator}` } })).json()) as Json;
    const top = d.cameras.find((c: Json) => c.name === "top");
    const page = await browser.newPage();
    try {
      await page.setContent(`<!doctype html><title>mjpeg</title><img id="cam" src="${top.mjpeg_url}">`);
      // The <img> decodes the parts as they arrive, at the camera's size.
      await page.waitForFunction((w: number) => (document.getElementById("cam") as HTMLImageElement).naturalWidth === w, { timeout: 30_000 }, top.width);
      const height = await page.evaluate(() => (document.getElementById("cam") as HTMLImageElement).naturalHeight);
      assert.equal(height, top.height);
    } finally {
      await page.close();
    }
    await eventually("the viewer to be gone", () => service.coordinator.live.watchers("so101-c") === 0);
  });
});

/**
 * Live streams over real HTTP and gRPC on a simulated fleet: the stream descriptor (who may see
 * which cell, its state, cameras and signed URLs) and MJPEG camera streams, which ask the cell for
 * frames over its LiveFeed call only while someone watches (between episodes too).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import ffmpeg from "@ffmpeg-installer/ffmpeg";
import jpeg from "jpeg-js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { readSse } from "../support/sse.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;
const execFileAsync = promisify(execFile);

/**
 * Reads the first `count` JPEG parts of a multipart/x-mixed-replace response (fewer only if it ends
 * first), then cancels it. One read may bring several parts: when this process (which also runs the
 * coordinator) falls behind, frames the cell sent meanwhile arrive together.
 */
async function mjpegFrames(response: Response, count: number): Promise<Buffer[]> {
  const reader = response.body!.getReader();
  let buffer = Buffer.alloc(0);
  const frames: Buffer[] = [];
  try {
    while (frames.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = Buffer.concat([buffer, Buffer.from(value)]);
      while (frames.length < count) {
        // A part: boundary line, headers (Content-Type, Content-Length, X-Captured-At-Ms), blank line, JPEG.
        const header = /Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n/.exec(buffer.toString("latin1"));
        if (!header) break;
        const start = header.index + header[0].length;
        const length = Number(header[1]);
        if (buffer.length < start + length) break;
        frames.push(buffer.subarray(start, start + length));
        buffer = buffer.subarray(start + length);
      }
    }
  } finally {
    await reader.cancel();
  }
  return frames;
}

describe("live streams: descriptors and MJPEG (simulated fleet)", function () {
  this.timeout(120_000);
  let service: TestService;
  let operatorKey: string;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  /**
   * The operator's descriptor of `cell` once the cell is connected: the shared fleet's cells connect
   * in their own time (an installed cell reads offline until it does), and under load one may also
   * be dropped for a missed heartbeat and reconnect.
   */
  const connected = (cell: string): Promise<Json> => eventually(`${cell} to connect`, async () => {
    const descriptor = await json(await service.api(`/v1/streams/${cell}`, as(operatorKey)), 200);
    return descriptor.state !== "offline" && descriptor;
  });

  before(async () => {
    operatorKey = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["streams:read"], new Date())).secret;
  });

  it("gives operators every cell's descriptor; customers see only cells running their work", async () => {
    const d = await connected("so101-b");
    assert.equal(d.object, "stream");
    assert.equal(d.cell, "so101-b");
    assert.equal(d.robot, "so101@3.11");
    assert.equal(d.environment, "tabletop@1");
    assert.ok(["idle", "running"].includes(d.state), d.state);
    assert.deepEqual(d.cameras.map((c: Json) => c.name).sort(), ["top", "wrist"]);
    for (const c of d.cameras) {
      assert.ok(c.width > 0 && c.height > 0, JSON.stringify(c));
      assert.match(c.mjpeg_url, new RegExp(`^${service.coordinator.baseUrl}/streams/cells/so101-b/cameras/${c.name}\\.mjpeg\\?token=`));
    }
    assert.match(d.webrtc.url, new RegExp(`^${service.coordinator.streamsUrl}/cells/so101-b\\?token=`));
    assert.deepEqual(d.webrtc.ice_servers, []);
    assert.ok(Date.parse(d.expires_at) > Date.now());
    // A cell installed but not in this fleet is offline, not unknown.
    const offline = await json(await service.api("/v1/streams/fr3-a", as(operatorKey)), 200);
    assert.equal(offline.state, "offline");
    assert.deepEqual(offline.cameras, []);

    assert.equal((await json(await service.api("/v1/streams/no-such-cell", as(operatorKey)), 404)).error.code, "not_found");
    // The customer's admin key: the idle cell is not theirs to watch.
    const hidden = await json(await service.api("/v1/streams/so101-b"), 404);
    assert.match(hidden.error.message, /not running your work/);
    const noScope = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["runs:read"], new Date())).secret;
    assert.equal((await json(await service.api("/v1/streams/so101-b", as(noScope)), 403)).error.code, "insufficient_scope");
  });

  it("streams MJPEG frames of the advertised size between episodes, and refuses bad tokens", async () => {
    // The first test waited for so101-b only.
    const d = await connected("so101-c");
    assert.deepEqual(d.cameras.map((c: Json) => c.name).sort(), ["top", "wrist"]);
    for (const camera of d.cameras) {
      const res = await fetch(camera.mjpeg_url);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type")!, /^multipart\/x-mixed-replace; boundary=/);
      const frames = await mjpegFrames(res, 3);
      assert.equal(frames.length, 3);
      for (const frame of frames) {
        const image = jpeg.decode(frame, { useTArray: true });
        assert.deepEqual([image.width, image.height], [camera.width, camera.height]);
      }
    }
    // Nobody watches any more: the hub lets go of the cell.
    await eventually("the viewers to be gone", () => service.coordinator.live.watchers("so101-c") === 0);
    const url = new URL(d.cameras[0].mjpeg_url);
    const forged = `${url.origin}${url.pathname}?token=${url.searchParams.get("token")!.replace(/.$/, (c) => (c === "0" ? "1" : "0"))}`;
    assert.equal((await json(await fetch(forged), 401)).error.code, "invalid_api_key");
    const otherCell = `${url.origin}${url.pathname.replace("so101-c", "so101-b")}${url.search}`;
    assert.match((await json(await fetch(otherCell), 401)).error.message, /another cell/);
  });

  it("plays in ffmpeg: a camera's MJPEG stream decodes to frames of the advertised size", async () => {
    const d = await connected("so101-c");
    const wrist = d.cameras.find((c: Json) => c.name === "wrist");
    const out = mkdtempSync(join(tmpdir(), "assay-mjpeg-"));
    try {
      // ffmpeg recognises the stream by its Content-Type; five frames, then it hangs up.
      await execFileAsync(ffmpeg.path, ["-hide_banner", "-loglevel", "error", "-i", wrist.mjpeg_url, "-frames:v", "5", "-f", "image2", join(out, "frame-%d.png")], { timeout: 30_000 });
      const frames = readdirSync(out).sort();
      assert.deepEqual(frames, ["frame-1.png", "frame-2.png", "frame-3.png", "frame-4.png", "frame-5.png"]);
      for (const name of frames) {
        const png = readFileSync(join(out, name));
        // IHDR: width and height, big-endian, at bytes 16 and 20.
        assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [wrist.width, wrist.height], name);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
    await eventually("ffmpeg's connection to be gone", () => service.coordinator.live.watchers("so101-c") === 0);
  });

  it("lets a customer watch the cell running their run while it runs, from the URL in the run's events", async () => {
    const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 4 } }), 201);
    const events = await service.api(`/v1/runs/${created.id}/events`);
    const seen = await readSse(events, (e) => e.event === "status" && (e.data as Json).status === "running");
    const { cell, webrtc } = seen.at(-1)!.data as Json;
    assert.match(webrtc, new RegExp(`^${service.coordinator.streamsUrl}/cells/${cell}\\?token=`));
    const mine = await service.api(`/v1/streams/${cell}`, as(TEST_ADMIN_KEY));
    // The cell may have finished its episodes between the event and this call; while it runs them it is ours.
    if (mine.status === 200) {
      const d = (await mine.json()) as Json;
      assert.equal(d.state, "running");
      assert.equal(d.run_id, created.id);
      assert.equal(typeof d.episode.index, "number");
      // Frames the control loop captured, tapped on their way to the recording.
      const top = d.cameras.find((c: Json) => c.name === "top");
      const frames = await mjpegFrames(await fetch(top.mjpeg_url), 2);
      for (const frame of frames) assert.equal(jpeg.decode(frame, { useTArray: true }).width, top.width);
    } else assert.equal(mine.status, 404);
    const { run } = await runEnd(service, created.id);
    assert.equal(run.status, "completed");
    // Done: the customer's view of the cell is gone again.
    assert.equal((await service.api(`/v1/streams/${cell}`)).status, 404);
  });
});

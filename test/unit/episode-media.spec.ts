import { strict as assert } from "node:assert";
import { readFile } from "node:fs/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { McapRecorder } from "../../cell-agent/recording/mcap-recorder.js";
import { readEpisodeSeries } from "../../coordinator/artifacts/episode-series.js";
import { compileThumbnailOptions, EpisodeThumbnails } from "../../coordinator/artifacts/episode-thumbnail.js";
import type { RandomReadable } from "../../coordinator/storage/object-readable.js";

const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];

/** A solid-colour 640x480 JPEG, so a still's colour says which frame it was taken from. */
const frame = (r: number, g: number, b: number) => sharp({ create: { width: 640, height: 480, channels: 3, background: { r, g, b } } }).jpeg().toBuffer();

/** Reads of an in-memory file that count how many reads were made. */
function counted(bytes: Uint8Array): RandomReadable & { reads: number } {
  const readable = {
    reads: 0,
    size: async () => BigInt(bytes.length),
    read: async (offset: bigint, size: bigint) => { readable.reads += 1; return bytes.subarray(Number(offset), Number(offset + size)); },
  };
  return readable;
}

describe("episode media from a recording (series, thumbnails)", () => {
  let dir: string;
  let mcap: Uint8Array;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-episode-media-"));
    const recorder = await McapRecorder.create(dir, "ep", { jointNames: JOINTS, cameraNames: ["top", "wrist"] });
    const red = await frame(255, 0, 0);
    const blue = await frame(0, 0, 255);
    // 100 steps at 50 Hz; the arm held (no target) on every tenth step; the top camera's first frame red, its last blue.
    for (let i = 0; i < 100; i++) {
      const tNs = 1_000_000_000n + BigInt(i) * 20_000_000n;
      recorder.jointStates(tNs, { tNs, positionRad: JOINTS.map((_, j) => i / 100 + j), velocityRadS: JOINTS.map(() => 0), currentA: JOINTS.map(() => 0), temperatureC: JOINTS.map(() => 30) });
      if (i % 5 === 0) recorder.camera(tNs, "top", { tNs, width: 640, height: 480, jpeg: i === 95 ? blue : red });
      if (i % 10 !== 0) recorder.jointTargets(tNs, JOINTS.map((_, j) => i / 100 + j + 0.5));
    }
    recorder.event(1_500_000_000n, { tS: 0.5, name: "gripper_closed", detail: "" });
    await recorder.finish(join(dir, "ep.mcap"));
    mcap = new Uint8Array(await readFile(join(dir, "ep.mcap")));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads each joint's measured positions and commanded targets, null where the step held", async () => {
    const series = await readEpisodeSeries(counted(mcap));
    assert.deepEqual(series.jointNames, JOINTS);
    assert.equal(series.steps, 100);
    assert.equal(series.tS.length, 100);
    assert.equal(series.tS[0], 0);
    assert.ok(Math.abs(series.tS[99]! - 1.98) < 1e-9);
    assert.equal(series.measured[2]![40], 0.4 + 2);
    assert.equal(series.commanded[2]![41], 0.41 + 2 + 0.5);
    assert.equal(series.commanded[2]![40], null, "step 40 sent no target");
    assert.deepEqual(series.events, [{ t_s: 0.5, name: "gripper_closed" }]);
  });

  it("downsamples to max_points steps, first and last kept, each with its own target", async () => {
    const series = await readEpisodeSeries(counted(mcap), 10);
    assert.equal(series.tS.length, 10);
    assert.equal(series.tS[0], 0);
    assert.ok(Math.abs(series.tS[9]! - 1.98) < 1e-9);
    for (const [k, t] of series.tS.entries()) {
      const step = Math.round(t / 0.02);
      assert.equal(series.measured[0]![k], step / 100);
      assert.equal(series.commanded[0]![k], step % 10 === 0 ? null : step / 100 + 0.5);
    }
  });

  it("takes a camera's last frame (or its first), scaled to the width, and reads a recording once while cached", async () => {
    const thumbnails = new EpisodeThumbnails({ widthPx: 160, maxEntries: 1 });
    const readable = counted(mcap);
    const last = await thumbnails.thumbnail({ sha256: "a", readable, at: "last" });
    assert.ok("jpeg" in last);
    assert.equal(last.camera, "top", "top is the default camera");
    const { width, height } = await sharp(last.jpeg).metadata();
    assert.deepEqual([width, height], [160, 120]);
    const [r, , b] = (await sharp(last.jpeg).stats()).channels.map((c) => c.mean);
    assert.ok(b! > 200 && r! < 50, "the last frame is the blue one");
    const first = await thumbnails.thumbnail({ sha256: "a", readable: counted(mcap), at: "first" });
    assert.ok("jpeg" in first && (await sharp(first.jpeg).stats()).channels[0]!.mean > 200, "the first frame is the red one");
    // maxEntries 1: the first still pushed the last one out; asked again, it is read again. Asked twice in a row, once.
    const reads = readable.reads;
    await thumbnails.thumbnail({ sha256: "a", readable, at: "last" });
    assert.ok(readable.reads > reads);
    const again = readable.reads;
    await thumbnails.thumbnail({ sha256: "a", readable, at: "last" });
    assert.equal(readable.reads, again, "a cached still reads nothing");
  });

  it("says why there is no still: a camera that recorded nothing, one the recording lacks", async () => {
    const thumbnails = new EpisodeThumbnails();
    assert.deepEqual(await thumbnails.thumbnail({ sha256: "b", readable: counted(mcap), camera: "wrist", at: "last" }), { missing: "camera wrist recorded no frame" });
    assert.deepEqual(await thumbnails.thumbnail({ sha256: "b", readable: counted(mcap), camera: "side", at: "last" }), { missing: 'the recording has no camera "side" (it has top, wrist)' });
  });

  it("refuses unknown or out-of-range options", () => {
    assert.throws(() => compileThumbnailOptions({ widthPx: 4 }), /widthPx must be an integer from 16 to 1920; got 4/);
    assert.throws(() => compileThumbnailOptions({ maxEntry: 3 } as never), /thumbnail option "maxEntry" is not known/);
  });
});

import { strict as assert } from "node:assert";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import jpeg from "jpeg-js";
import { McapRecorder } from "../../cell-agent/recording/mcap-recorder.js";
import { FileHandleReadable } from "../../cell-agent/recording/file-writable.js";
import { forwardKinematicsFor } from "../../cell-agent/safety/arm-kinematics.js";
import { deriveGroundTruth } from "../../coordinator/artifacts/ground-truth.js";
import { EpisodeRecording, fileReadable } from "../../coordinator/exports/episode-steps.js";
import { loadMcapCompression, MAX_UNCOMPRESSED_CHUNK_BYTES } from "../../protocol/recording/mcap-compression.js";
import { LegacyMcapRecorder } from "../support/legacy-mcap-recorder.js";
import { imageMessages, jsonMessages, readMcapFromSpec, transformMessages, type SpecTransform } from "../support/mcap-spec-reader.js";

const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];

/** Ten control steps of a two-camera so101 episode, the same through either recorder. */
async function recordEpisode(recorder: McapRecorder | LegacyMcapRecorder, finalPath: string, images: Uint8Array[]): Promise<void> {
  recorder.meta(1n, { phase: "start", firmware: "3.11", seed: 5, robot: "so101" });
  for (let i = 0; i < 10; i++) {
    const t = BigInt(1_000_000_000 + i * 100_000_000);
    const position = [0.1 * i, 0.3, -0.2 * i, 0.4, 0.05 * i, 0.5];
    recorder.jointStates(t, { tNs: t, positionRad: position, velocityRadS: JOINTS.map(() => 0), currentA: JOINTS.map(() => 0.1), temperatureC: JOINTS.map(() => 30) });
    recorder.camera(t, "top", { tNs: t, width: 4, height: 4, jpeg: images[i % images.length]! });
    if (i % 2 === 0) recorder.camera(t, "wrist", { tNs: t + 1000n, width: 4, height: 4, jpeg: images[(i + 1) % images.length]! });
    recorder.jointTargets(t, position.map((p) => p + 0.01));
    recorder.wrench(t, { tNs: t, forceN: [1, 2, 3], torqueNm: [0, 0, 0.1] });
    recorder.objectPoses(t, t, [{ name: "cube", positionM: [0.2, 0, 0.015], orientation: [0, 0, 0, 1] }]);
  }
  recorder.event(2_000_000_000n, { tS: 1, name: "gripper_closed", detail: "" });
  recorder.meta(2_000_000_001n, { phase: "end", outcome: { outcome: "success" } });
  await recorder.finish(finalPath);
}

const testImages = () => [0, 90, 200].map((v) => new Uint8Array(jpeg.encode({ width: 4, height: 4, data: Buffer.alloc(64, v) }, 80).data));

/** Composes a chain of transforms (translation then rotation, parent to child) into the last child's origin. */
function chainOrigin(transforms: SpecTransform[], to: string): [number, number, number] {
  const rotate = (q: number[], v: number[]) => {
    const [x, y, z, w] = q as [number, number, number, number];
    const [vx, vy, vz] = v as [number, number, number];
    const tx = 2 * (y * vz - z * vy), ty = 2 * (z * vx - x * vz), tz = 2 * (x * vy - y * vx);
    return [vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx)];
  };
  const mul = (a: number[], b: number[]) => {
    const [ax, ay, az, aw] = a as [number, number, number, number];
    const [bx, by, bz, bw] = b as [number, number, number, number];
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
  };
  const path: SpecTransform[] = [];
  for (let frame = to; frame !== "base_link";) {
    const t = transforms.find((x) => x.child === frame);
    assert.ok(t, `no transform to ${frame}`);
    path.unshift(t);
    frame = t.parent;
  }
  let position = [0, 0, 0];
  let orientation = [0, 0, 0, 1];
  for (const t of path) {
    const offset = rotate(orientation, t.translation);
    position = position.map((p, i) => p + offset[i]!);
    orientation = mul(orientation, t.rotation);
  }
  return position as [number, number, number];
}

describe("agent MCAP recorder", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "agent-mcap-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes zstd chunks, protobuf camera frames, /tf and the URDF, and reads back through McapIndexedReader", async () => {
    const images = testImages();
    const recorder = await McapRecorder.create(dir, "ep-1", { jointNames: JOINTS, cameraNames: ["top", "wrist"], robotModel: "so101" });
    assert.ok(existsSync(join(dir, "ep-1.mcap.part")));
    await recordEpisode(recorder, join(dir, "ep-1.mcap"), images);
    assert.ok(!existsSync(join(dir, "ep-1.mcap.part")));

    const handle = await open(join(dir, "ep-1.mcap"), "r");
    try {
      const { decompressHandlers } = await loadMcapCompression();
      const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle), decompressHandlers });
      const channels = [...reader.channelsById.values()];
      const schemaOf = (topic: string) => reader.schemasById.get(channels.find((c) => c.topic === topic)!.schemaId)!;
      assert.deepEqual(channels.map((c) => c.topic).sort(), [
        "/camera/top", "/camera/wrist", "/camera_sync", "/events", "/ft_wrist", "/gt/object_poses", "/joint_states_measured", "/joint_targets_commanded", "/meta",
        "/robot_description", "/tf",
      ]);
      for (const c of channels) {
        const protobuf = c.topic.startsWith("/camera/") || c.topic === "/tf";
        assert.equal(c.messageEncoding, protobuf ? "protobuf" : "json", c.topic);
        assert.equal(reader.schemasById.get(c.schemaId)!.encoding, protobuf ? "protobuf" : "jsonschema", c.topic);
      }
      assert.equal(schemaOf("/camera/top").name, "foxglove.CompressedImage");
      assert.equal(schemaOf("/tf").name, "foxglove.FrameTransforms");
      assert.ok([...reader.chunkIndexes].every((c) => c.compression === "zstd"));
      let messages = 0;
      for await (const _ of reader.readMessages()) messages++;
      assert.equal(messages, 2 + 10 * 5 + 5 + 1 + 10 + 1, "meta, five per step, wrist frames, event, /tf, URDF");
    } finally {
      await handle.close();
    }

    // The independent reader: frames are the JPEG bytes as captured, transforms follow the kinematics.
    const file = readMcapFromSpec(readFileSync(join(dir, "ep-1.mcap")));
    assert.ok(file.chunkCompressions.length > 0 && file.chunkCompressions.every((c) => c === "zstd"));
    assert.equal(file.dataSectionCrc!.stated, file.dataSectionCrc!.computed, "Data End's CRC covers the data section");
    const top = imageMessages(file, "/camera/top");
    assert.equal(top.length, 10);
    assert.deepEqual(top.map((f) => Buffer.from(f.data)), [...Array(10).keys()].map((i) => Buffer.from(images[i % 3]!)));
    assert.deepEqual([top[0]!.frameId, top[0]!.format, top[0]!.timestamp], ["top", "jpeg", { sec: 1, nsec: 0 }]);
    assert.deepEqual(imageMessages(file, "/camera/wrist")[1]!.timestamp, { sec: 1, nsec: 200_001_000 });
    const urdf = jsonMessages(file, "/robot_description");
    assert.equal(urdf.length, 1);
    assert.match(urdf[0]!.body.data, /<robot name="so101">/);
    for (const joint of JOINTS.slice(0, 5)) assert.match(urdf[0]!.body.data, new RegExp(`<joint name="${joint}" type="revolute">`));
    const tf = transformMessages(file);
    assert.equal(tf.length, 10);
    const fk = forwardKinematicsFor("so101", JOINTS)!;
    for (const [i, message] of tf.entries()) {
      const position = [0.1 * i, 0.3, -0.2 * i, 0.4, 0.05 * i, 0.5];
      const tip = chainOrigin(message.transforms, "fingertip_link");
      fk(position).forEach((v, k) => assert.ok(Math.abs(v - tip[k]!) < 1e-9, `step ${i} axis ${k}: ${tip[k]} vs ${v}`));
    }
  });

  it("a model without known kinematics gets no /tf and no URDF", async () => {
    const recorder = await McapRecorder.create(dir, "ep-2", { jointNames: ["a", "b"], cameraNames: ["top"], robotModel: "fr3" });
    recorder.jointStates(1n, { tNs: 1n, positionRad: [0, 0], velocityRadS: [0, 0], currentA: [0, 0], temperatureC: [0, 0] });
    await recorder.finish(join(dir, "ep-2.mcap"));
    const topics = [...readMcapFromSpec(readFileSync(join(dir, "ep-2.mcap"))).channels.values()].map((c) => c.topic);
    assert.ok(!topics.includes("/tf") && !topics.includes("/robot_description"));
  });

  it("the exporters' reader and ground truth read the new layout and the old one alike", async () => {
    const images = testImages();
    const made = { new: join(dir, "new.mcap"), old: join(dir, "old.mcap") };
    await recordEpisode(await McapRecorder.create(dir, "new", { jointNames: JOINTS, cameraNames: ["top", "wrist"], robotModel: "so101" }), made.new, images);
    await recordEpisode(await LegacyMcapRecorder.create(dir, "old", { jointNames: JOINTS, cameraNames: ["top", "wrist"] }), made.old, images);
    const oldFile = readMcapFromSpec(readFileSync(made.old));
    assert.deepEqual(oldFile.chunkCompressions.every((c) => c === ""), true, "the legacy recorder writes the old layout");
    assert.equal([...oldFile.channels.values()].find((c) => c.topic === "/camera/top")!.messageEncoding, "json");
    // The independent reader takes the old layout too.
    assert.deepEqual(imageMessages(oldFile, "/camera/top").map((f) => Buffer.from(f.data)), imageMessages(readMcapFromSpec(readFileSync(made.new)), "/camera/top").map((f) => Buffer.from(f.data)));

    const read = async (path: string) => {
      const recording = await EpisodeRecording.open(path);
      try {
        const steps = [];
        for await (const step of recording.steps()) steps.push({ ...step, images: Object.fromEntries([...step.images].map(([k, v]) => [k, Buffer.from(v).toString("hex")])), fresh: [...step.fresh].sort() });
        return { header: recording.header, steps };
      } finally {
        await recording.close();
      }
    };
    const [fresh, legacy] = [await read(made.new), await read(made.old)];
    assert.equal(fresh.steps.length, 10);
    assert.deepEqual(fresh.header.cameras, ["top", "wrist"]);
    assert.equal(fresh.steps[3]!.images.top, Buffer.from(images[0]!).toString("hex"));
    assert.deepEqual(fresh.steps[3]!.fresh, ["top"]);
    assert.deepEqual(fresh, legacy);

    const truth = async (path: string) => {
      const handle = await open(path, "r");
      try {
        return await deriveGroundTruth({ runId: "run_x", episodeId: "ep", scenarioId: 0, mcap: fileReadable(handle), mcapFileName: "ep.mcap", mcapSha256: "00" });
      } finally {
        await handle.close();
      }
    };
    const [truthNew, truthOld] = [await truth(made.new), await truth(made.old)];
    assert.equal(truthNew.joints.measured_rad.length, 10);
    assert.deepEqual(truthNew.objects.cube!.position_m[0], [0.2, 0, 0.015]);
    assert.deepEqual(truthNew, truthOld);
  });

  it("a recording whose chunk claims more than the limit uncompressed is refused before anything is allocated", async () => {
    const path = join(dir, "big.mcap");
    await recordEpisode(await McapRecorder.create(dir, "big", { jointNames: JOINTS, cameraNames: ["top", "wrist"], robotModel: "so101" }), path, testImages());
    const handle = await open(path, "r");
    const { decompressHandlers } = await loadMcapCompression();
    const firstChunk = (await McapIndexedReader.Initialize({ readable: new FileHandleReadable(handle), decompressHandlers })).chunkIndexes[0]!.chunkStartOffset;
    await handle.close();
    // Chunk record: opcode, record length, message start and end times, then uncompressed_size.
    const bytes = readFileSync(path);
    bytes.writeBigUInt64LE(1n << 40n, Number(firstChunk) + 1 + 8 + 16);
    writeFileSync(path, bytes);
    const recording = await EpisodeRecording.open(path).catch((error: Error) => error);
    const error = recording instanceof Error ? recording : await (async () => {
      try {
        for await (const _ of recording.steps());
        return undefined;
      } catch (e) {
        return e as Error;
      } finally {
        await recording.close();
      }
    })();
    assert.ok(error, "the damaged recording must not read");
    assert.match(error.message, new RegExp(`claims 1099511627776 bytes uncompressed, over the ${MAX_UNCOMPRESSED_CHUNK_BYTES}-byte limit`));
  });
});

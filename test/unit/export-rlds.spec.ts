/**
 * The RLDS export read back the way TensorFlow reads it, by a reader written here from the
 * specifications (TFRecord framing with masked CRC-32C, protobuf wire format, tf.train.Example), not
 * from the writer's code: both CRCs of every record, every Example against features.json, the steps,
 * the frames, the metadata, and dataset_info.json against the shards on disk.
 */
import { strict as assert } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import jpeg from "jpeg-js";
import { McapRecorder } from "../../cell-agent/recording/mcap-recorder.js";
import type { ExportEpisode, ExportRun } from "../../coordinator/exports/export-input.js";
import { writeRldsDataset } from "../../coordinator/exports/rlds/write-rlds.js";
import { crc32c } from "../../coordinator/exports/rlds/crc32c.js";
import { frameLevel, writeFixtureEpisodes } from "../support/export-fixtures.js";

// --- CRC-32C, bit by bit (RFC 3720 B.4: reflected polynomial 0x82F63B78) ---------------------------
function crc32cBitwise(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function masked(crc: number): number {
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}

// --- TFRecord: u64 length, u32 masked CRC of the length, data, u32 masked CRC of the data ----------
function readTfRecords(file: Buffer, name: string): Buffer[] {
  const records: Buffer[] = [];
  let offset = 0;
  while (offset < file.length) {
    assert.ok(offset + 12 <= file.length, `${name}: truncated record header at ${offset}`);
    const length = Number(file.readBigUInt64LE(offset));
    assert.equal(file.readUInt32LE(offset + 8), masked(crc32cBitwise(file.subarray(offset, offset + 8))), `${name}: length CRC of record ${records.length}`);
    const data = file.subarray(offset + 12, offset + 12 + length);
    assert.equal(data.length, length, `${name}: record ${records.length} truncated`);
    assert.equal(file.readUInt32LE(offset + 12 + length), masked(crc32cBitwise(data)), `${name}: data CRC of record ${records.length}`);
    records.push(data);
    offset += 16 + length;
  }
  return records;
}

// --- protobuf wire format ----------------------------------------------------------------------------
type Field = { no: number; wire: number; varint?: bigint; bytes?: Buffer };

function readVarint(buf: Buffer, at: { pos: number }): bigint {
  let result = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = buf[at.pos++];
    assert.ok(byte !== undefined && shift < 70n, "varint runs past the message");
    result |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return result;
  }
}

function readFields(buf: Buffer): Field[] {
  const fields: Field[] = [];
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const key = Number(readVarint(buf, at));
    const field: Field = { no: key >>> 3, wire: key & 7 };
    if (field.wire === 0) field.varint = readVarint(buf, at);
    else if (field.wire === 2) {
      const length = Number(readVarint(buf, at));
      field.bytes = buf.subarray(at.pos, at.pos + length);
      assert.equal(field.bytes.length, length, "length-delimited field runs past the message");
      at.pos += length;
    } else if (field.wire === 5) (field.bytes = buf.subarray(at.pos, at.pos + 4)), (at.pos += 4);
    else if (field.wire === 1) (field.bytes = buf.subarray(at.pos, at.pos + 8)), (at.pos += 8);
    else assert.fail(`unexpected wire type ${field.wire}`);
    fields.push(field);
  }
  return fields;
}

type Decoded = { kind: "bytes"; values: Buffer[] } | { kind: "float"; values: number[] } | { kind: "int64"; values: bigint[] };

/** tf.train.Example { Features features = 1 } -> Features { map<string, Feature> feature = 1 }. */
function decodeExample(record: Buffer): Map<string, Decoded> {
  const out = new Map<string, Decoded>();
  for (const features of readFields(record).filter((f) => f.no === 1)) {
    for (const entry of readFields(features.bytes!).filter((f) => f.no === 1)) {
      const parts = readFields(entry.bytes!);
      const key = parts.find((p) => p.no === 1)!.bytes!.toString("utf8");
      const feature = readFields(parts.find((p) => p.no === 2)!.bytes!);
      assert.equal(feature.length, 1, `${key}: a Feature sets exactly one list`);
      const list = readFields(feature[0].bytes!).filter((f) => f.no === 1);
      if (feature[0].no === 1) out.set(key, { kind: "bytes", values: list.map((f) => Buffer.from(f.bytes!)) });
      else if (feature[0].no === 2) {
        const values: number[] = [];
        for (const f of list) {
          if (f.wire === 5) values.push(f.bytes!.readFloatLE(0));
          else for (let i = 0; i < f.bytes!.length; i += 4) values.push(f.bytes!.readFloatLE(i));
        }
        out.set(key, { kind: "float", values });
      } else if (feature[0].no === 3) {
        const values: bigint[] = [];
        for (const f of list) {
          if (f.wire === 0) values.push(BigInt.asIntN(64, f.varint!));
          else for (const at = { pos: 0 }; at.pos < f.bytes!.length; ) values.push(BigInt.asIntN(64, readVarint(f.bytes!, at)));
        }
        out.set(key, { kind: "int64", values });
      } else assert.fail(`${key}: unknown Feature field ${feature[0].no}`);
    }
  }
  return out;
}

// --- features.json: flat keys with the list kind and values per element -------------------------
type Expected = { kind: Decoded["kind"]; perElement: number; inSteps: boolean; dims: number[] };

function expectedKeys(node: any, prefix = "", inSteps = false, out = new Map<string, Expected>()): Map<string, Expected> {
  const cls = String(node.pythonClassName);
  const dimsOf = (shape: any) => (shape?.dimensions ?? []).map(Number);
  if (node.featuresDict) {
    for (const [k, child] of Object.entries(node.featuresDict.features)) expectedKeys(child, prefix ? `${prefix}/${k}` : k, inSteps, out);
  } else if (node.sequence) {
    assert.equal(cls, "tensorflow_datasets.core.features.dataset_feature.Dataset");
    assert.equal(node.sequence.length, "-1");
    expectedKeys(node.sequence.feature, prefix, true, out);
  } else if (node.tensor) {
    const dims = dimsOf(node.tensor.shape);
    const kind = node.tensor.dtype === "float32" ? "float" : ["int64", "bool"].includes(node.tensor.dtype) ? "int64" : assert.fail(`${prefix}: dtype ${node.tensor.dtype}`);
    assert.ok(cls.endsWith(dims.length ? "tensor_feature.Tensor" : "scalar.Scalar"), `${prefix}: ${cls}`);
    out.set(prefix, { kind, perElement: dims.reduce((a: number, b: number) => a * b, 1), inSteps, dims });
  } else if (node.image) {
    assert.equal(node.image.encodingFormat, "jpeg");
    assert.equal(node.image.dtype, "uint8");
    out.set(prefix, { kind: "bytes", perElement: 1, inSteps, dims: dimsOf(node.image.shape) });
  } else if (node.text) {
    out.set(prefix, { kind: "bytes", perElement: 1, inSteps, dims: [] });
  } else assert.fail(`${prefix}: unknown feature ${JSON.stringify(node)}`);
  return out;
}

// --- a dataset directory read back ----------------------------------------------------------------
function readDataset(outDir: string) {
  const dir = join(outDir, "assay_run", "1.0.0");
  const info = JSON.parse(readFileSync(join(dir, "dataset_info.json"), "utf8"));
  const features = JSON.parse(readFileSync(join(dir, "features.json"), "utf8"));
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8"));
  const shardNames = readdirSync(dir).filter((n) => n.includes(".tfrecord")).sort();
  const shards = shardNames.map((name) => ({ name, bytes: statSync(join(dir, name)).size, records: readTfRecords(readFileSync(join(dir, name)), name) }));
  const examples = shards.flatMap((s) => s.records.map(decodeExample));
  return { dir, info, features, metadata, shards, examples };
}

const strings = (d: Decoded | undefined) => (d as { values: Buffer[] }).values.map((b) => b.toString("utf8"));
const ints = (d: Decoded | undefined) => (d as { values: bigint[] }).values.map(Number);
const floats = (d: Decoded | undefined) => (d as { values: number[] }).values;

function greyLevel(frame: Buffer, width: number, height: number): number {
  const image = jpeg.decode(frame, { useTArray: true });
  assert.deepEqual([image.width, image.height], [width, height]);
  return image.data[4 * (Math.floor(height / 2) * width + Math.floor(width / 2))];
}

describe("RLDS export (TFDS layout)", () => {
  let root: string;
  before(() => (root = mkdtempSync(join(tmpdir(), "export-rlds-"))));
  after(() => rmSync(root, { recursive: true, force: true }));

  it("pins the test's own CRC-32C to the published check value", () => {
    assert.equal(crc32cBitwise(Buffer.from("123456789")), 0xe3069283);
  });

  it("the exporter's native CRC-32C agrees with the bitwise one on every length and offset", () => {
    const bytes = new Uint8Array(1024).map((_, i) => (i * 131 + 7) & 0xff);
    for (const [start, end] of [[0, 0], [0, 1], [3, 11], [1, 1024], [0, 1024], [5, 600]] as const) {
      const view = bytes.subarray(start, end);
      assert.equal(crc32c(view), crc32cBitwise(view), `bytes ${start}..${end}`);
    }
  });

  describe("a three-episode run", () => {
    let run: ExportRun;
    let episodes: ExportEpisode[];
    let result: Awaited<ReturnType<typeof writeRldsDataset>>;
    let ds: ReturnType<typeof readDataset>;
    const progress: number[] = [];
    const outDir = () => join(root, "out");

    before(async () => {
      ({ run, episodes } = await writeFixtureEpisodes(join(root, "in")));
      result = await writeRldsDataset(run, episodes, outDir(), { onProgress: (n) => progress.push(n) });
      ds = readDataset(outDir());
    });

    it("names its files by TFDS's template and accounts for them in dataset_info.json", () => {
      assert.equal(ds.info.name, "assay_run");
      assert.equal(ds.info.version, "1.0.0");
      assert.equal(ds.info.fileFormat, "tfrecord");
      assert.equal(ds.info.splits.length, 1);
      const split = ds.info.splits[0];
      assert.equal(split.name, "train");
      assert.equal(split.filepathTemplate, "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}");
      const n = ds.shards.length;
      ds.shards.forEach((shard, i) => {
        const expected = split.filepathTemplate.replace("{DATASET}", ds.info.name).replace("{SPLIT}", split.name)
          .replace("{FILEFORMAT}", ds.info.fileFormat).replace("{SHARD_X_OF_Y}", `${String(i).padStart(5, "0")}-of-${String(n).padStart(5, "0")}`);
        assert.equal(shard.name, expected);
      });
      // proto3 JSON writes int64 as strings; shard lengths are the records on disk
      assert.deepEqual(split.shardLengths, ds.shards.map((s) => String(s.records.length)));
      // TFDS counts a split's numBytes as its serialized examples, without the 16 framing bytes per record
      const recordBytes = ds.shards.reduce((sum, s) => sum + s.records.reduce((a, r) => a + r.length, 0), 0);
      const fileBytes = ds.shards.reduce((sum, s) => sum + s.bytes, 0);
      assert.equal(split.numBytes, String(recordBytes));
      assert.equal(recordBytes, fileBytes - 16 * episodes.length);
      assert.deepEqual(result.shards, ds.shards.map((s) => `assay_run/1.0.0/${s.name}`));
      assert.deepEqual([...result.files].sort(), ["dataset_info.json", "features.json", "metadata.json", ...ds.shards.map((s) => s.name)].map((f) => `assay_run/1.0.0/${f}`).sort());
      assert.ok(!existsSync(`${ds.dir}.incomplete`));
    });

    it("carries the run's pins in the description and metadata.json", () => {
      assert.match(ds.info.description, new RegExp(run.runId));
      assert.match(ds.info.description, /perturbation_rev/);
      assert.equal(ds.metadata.run_id, run.runId);
      assert.equal(ds.metadata.kind, run.kind);
      assert.deepEqual(ds.metadata.resolved_pins, run.resolvedPins);
      assert.equal(ds.metadata.created, run.created);
      assert.equal(ds.metadata.completed, run.completed);
    });

    it("writes one Example per episode whose keys, dtypes and lengths are what features.json declares", () => {
      const expected = expectedKeys(ds.features);
      for (const key of ["steps/observation/state", "steps/observation/top", "steps/observation/wrist", "steps/action", "steps/reward", "steps/discount",
        "steps/is_first", "steps/is_last", "steps/is_terminal", "steps/language_instruction", "episode_metadata/replay_spec", "episode_metadata/seed"]) {
        assert.ok(expected.has(key), `features.json declares ${key}`);
      }
      assert.deepEqual(expected.get("steps/observation/state")!.dims, [6]);
      assert.equal(ds.examples.length, episodes.length);
      assert.equal(result.episodes, episodes.length);
      assert.equal(result.steps, episodes.reduce((sum, _, i) => sum + 20 + 3 * i, 0));
      assert.deepEqual(progress, [1, 2, 3]);
      ds.examples.forEach((example, i) => {
        const steps = 20 + 3 * i;
        assert.deepEqual([...example.keys()].sort(), [...expected.keys()].sort(), `episode ${i}: keys`);
        for (const [key, spec] of expected) {
          const feature = example.get(key)!;
          assert.equal(feature.kind, spec.kind, `episode ${i} ${key}: list kind`);
          assert.equal(feature.values.length, spec.perElement * (spec.inSteps ? steps : 1), `episode ${i} ${key}: values`);
        }
      });
    });

    it("marks the first, last and terminal steps and rewards the last step of a success", () => {
      ds.examples.forEach((example, i) => {
        const steps = 20 + 3 * i;
        const onlyLast = Array.from({ length: steps }, (_, k) => (k === steps - 1 ? 1 : 0));
        assert.deepEqual(ints(example.get("steps/is_first")), Array.from({ length: steps }, (_, k) => (k === 0 ? 1 : 0)));
        assert.deepEqual(ints(example.get("steps/is_last")), onlyLast);
        assert.deepEqual(ints(example.get("steps/is_terminal")), onlyLast);
        assert.deepEqual(floats(example.get("steps/reward")), episodes[i].outcome === "success" ? onlyLast : onlyLast.map(() => 0));
        assert.deepEqual(floats(example.get("steps/discount")), onlyLast.map(() => 1));
        assert.deepEqual(strings(example.get("steps/language_instruction")), onlyLast.map(() => episodes[i].instruction));
      });
      assert.equal(episodes[0].outcome, "success");
      assert.equal(episodes[1].outcome, "failure");
    });

    it("stores each step's measured state and commanded action in joint order", () => {
      const example = ds.examples[1];
      const state = floats(example.get("steps/observation/state"));
      const action = floats(example.get("steps/action"));
      for (const k of [0, 3, 4, 22]) {
        for (let j = 0; j < 6; j++) {
          const position = 1 + k / 100 + j / 10;
          assert.equal(state[k * 6 + j], Math.fround(position), `state step ${k} joint ${j}`);
          // every fifth step held position: its action is the measured position
          assert.equal(action[k * 6 + j], Math.fround(k % 5 === 4 ? position : position + 0.01), `action step ${k} joint ${j}`);
        }
      }
    });

    it("stores each camera's latest JPEG at every step, of the size features.json declares", () => {
      const expected = expectedKeys(ds.features);
      const [topH, topW] = expected.get("steps/observation/top")!.dims;
      const [wristH, wristW] = expected.get("steps/observation/wrist")!.dims;
      assert.deepEqual([topH, topW, wristH, wristW], [24, 32, 12, 16]);
      const example = ds.examples[2];
      const top = (example.get("steps/observation/top") as { values: Buffer[] }).values;
      const wrist = (example.get("steps/observation/wrist") as { values: Buffer[] }).values;
      for (const k of [0, 7, 13, 25]) {
        assert.ok(Math.abs(greyLevel(top[k], topW, topH) - frameLevel(k)) <= 3, `top at step ${k}`);
        // the wrist camera sends every second step; in between its latest frame repeats
        assert.ok(Math.abs(greyLevel(wrist[k], wristW, wristH) - frameLevel(k - (k % 2))) <= 3, `wrist at step ${k}`);
      }
    });

    it("stores the episode's record in episode_metadata", () => {
      ds.examples.forEach((example, i) => {
        const ep = episodes[i];
        const text = (key: string) => strings(example.get(`episode_metadata/${key}`))[0];
        const int = (key: string) => ints(example.get(`episode_metadata/${key}`))[0];
        assert.equal(text("run_id"), run.runId);
        assert.equal(text("episode_id"), ep.episodeId);
        assert.equal(int("episode_index"), ep.index);
        assert.equal(text("outcome"), ep.outcome);
        assert.equal(int("policy_succeeded"), ep.policySucceeded ? 1 : 0);
        assert.equal(int("intervened"), 0);
        assert.equal(text("failure_cluster"), ep.failureCluster ?? "");
        assert.deepEqual(JSON.parse(text("replay_spec")), ep.replaySpec);
        assert.equal(text("cell_id"), ep.cellId);
        assert.equal(int("seed"), ep.seed);
        assert.deepEqual([text("robot"), text("environment"), text("task")], [ep.robot, ep.environment, ep.task]);
      });
      assert.equal(strings(ds.examples[0].get("episode_metadata/failure_cluster"))[0], "");
      assert.equal(strings(ds.examples[1].get("episode_metadata/failure_cluster"))[0], "grasp_slip");
    });

    it("replaces the dataset when the run is exported again", async () => {
      const again = await writeRldsDataset(run, episodes.slice(0, 1), outDir());
      assert.equal(again.episodes, 1);
      assert.equal(readDataset(outDir()).examples.length, 1);
    });
  });

  it("rolls over to a new shard by size and names every shard -of- the final count", async () => {
    const { run, episodes } = await writeFixtureEpisodes(join(root, "in-small"), { episodes: 5, steps: () => 6 });
    const outDir = join(root, "out-small");
    // each Example here is about 9 KB: two fit in 20 000 bytes, a third starts the next shard
    const result = await writeRldsDataset(run, episodes, outDir, { shardSizeBytes: 20_000 });
    const ds = readDataset(outDir);
    assert.deepEqual(ds.shards.map((s) => s.records.length), [2, 2, 1]);
    assert.deepEqual(ds.shards.map((s) => s.name), ds.shards.map((_, i) => `assay_run-train.tfrecord-${String(i).padStart(5, "0")}-of-${String(ds.shards.length).padStart(5, "0")}`));
    assert.ok(ds.shards.every((s) => s.bytes <= 20_000), "no shard passes the limit");
    assert.deepEqual(ds.info.splits[0].shardLengths, ds.shards.map((s) => String(s.records.length)));
    assert.equal(ds.examples.length, 5);
    assert.deepEqual(ds.examples.map((e) => strings(e.get("episode_metadata/episode_id"))[0]), episodes.map((e) => e.episodeId));
    assert.deepEqual(result.shards, ds.shards.map((s) => `assay_run/1.0.0/${s.name}`));
  });

  it("leaves each shard as parts whose concatenation is the shard, for an archive (shardPartBytes)", async () => {
    const { run, episodes } = await writeFixtureEpisodes(join(root, "in-parts"), { episodes: 5, steps: () => 6 });
    const whole = await writeRldsDataset(run, episodes, join(root, "out-whole"), { shardSizeBytes: 20_000 });
    // Each Example is about 9 KB: a part of 5 000 bytes holds one record, one of 15 000 two.
    for (const partBytes of [5_000, 15_000]) {
      const outDir = join(root, `out-parts-${partBytes}`);
      const parted = await writeRldsDataset(run, episodes, outDir, { shardSizeBytes: 20_000, shardPartBytes: partBytes });
      assert.deepEqual(parted.shards, whole.shards);
      assert.deepEqual(parted.files, whole.files);
      assert.deepEqual(parted.shardParts.map((parts) => parts.length), partBytes === 5_000 ? [2, 2, 1] : [1, 1, 1]);
      parted.shardParts.forEach((parts, i) => {
        const concatenated = Buffer.concat(parts.map((part) => readFileSync(join(outDir, part))));
        assert.ok(concatenated.equals(readFileSync(join(root, "out-whole", whole.shards[i]))), `shard ${i} differs from its parts`);
      });
      for (const name of ["dataset_info.json", "features.json"]) {
        assert.equal(readFileSync(join(outDir, "assay_run/1.0.0", name), "utf8"), readFileSync(join(root, "out-whole/assay_run/1.0.0", name), "utf8"));
      }
    }
  });

  it("fills a camera's steps before its first frame with black frames of its size", async () => {
    const dir = join(root, "late-camera");
    mkdirSync(dir, { recursive: true });
    const recorder = await McapRecorder.create(dir, "ep_late", { jointNames: ["a", "b"], cameraNames: ["side"] });
    const frame = jpeg.encode({ width: 8, height: 6, data: Buffer.alloc(8 * 6 * 4, 200) }, 90).data;
    for (let k = 0; k < 5; k++) {
      const t = 1_000_000_000n + BigInt(k) * 33_000_000n;
      recorder.jointStates(t, { tNs: t, positionRad: [k, -k], velocityRadS: [0, 0], currentA: [0, 0], temperatureC: [30, 30] });
      if (k >= 3) recorder.camera(t, "side", { tNs: t, width: 8, height: 6, jpeg: frame });
    }
    const mcapPath = join(dir, "ep_late.mcap");
    await recorder.finish(mcapPath);
    const { run, episodes } = await writeFixtureEpisodes(join(root, "late-base"), { episodes: 1 });
    const episode: ExportEpisode = { ...episodes[0], episodeId: "ep_late", mcap: { ...episodes[0].mcap, path: mcapPath, fileName: "ep_late.mcap" } };
    await writeRldsDataset(run, [episode], join(root, "out-late"));
    const ds = readDataset(join(root, "out-late"));
    assert.deepEqual(expectedKeys(ds.features).get("steps/observation/side")!.dims, [6, 8, 3]);
    const frames = (ds.examples[0].get("steps/observation/side") as { values: Buffer[] }).values;
    assert.deepEqual(frames.map((f) => greyLevel(f, 8, 6) > 100), [false, false, false, true, true]);
    assert.ok(greyLevel(frames[0], 8, 6) <= 3, "black before the first frame");
  });

  it("refuses an episode whose joints differ from the first one's, naming both, and leaves no dataset behind", async () => {
    const { run, episodes } = await writeFixtureEpisodes(join(root, "six"), { episodes: 1 });
    const five = await writeFixtureEpisodes(join(root, "five"), { episodes: 1, jointNames: ["a", "b", "c", "d", "e"] });
    const odd = { ...five.episodes[0], episodeId: "ep_five_joints" };
    const outDir = join(root, "out-joints");
    await assert.rejects(writeRldsDataset(run, [episodes[0], odd], outDir), (error: Error) => {
      assert.match(error.message, /episode ep_five_joints has 5 joints \[a, b, c, d, e\] but the first episode ep_fixture_0 has 6 joints/);
      return true;
    });
    assert.ok(!existsSync(join(outDir, "assay_run", "1.0.0")));
    assert.ok(!existsSync(join(outDir, "assay_run", "1.0.0.incomplete")));
  });

  it("refuses an episode whose cameras differ from the first one's, naming both sets", async () => {
    const { run, episodes } = await writeFixtureEpisodes(join(root, "two-cams"), { episodes: 1 });
    const one = await writeFixtureEpisodes(join(root, "one-cam"), { episodes: 1, cameras: [{ name: "top", width: 32, height: 24 }] });
    const odd = { ...one.episodes[0], episodeId: "ep_top_only" };
    await assert.rejects(writeRldsDataset(run, [episodes[0], odd], join(root, "out-cams")), (error: Error) => {
      assert.match(error.message, /episode ep_top_only has cameras \[top\] but the first episode ep_fixture_0 has cameras \[top, wrist\]/);
      return true;
    });
  });
});

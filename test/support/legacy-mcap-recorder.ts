/**
 * The agent's MCAP recorder as it was before recordings were compressed and camera frames binary
 * (uncompressed 256 KiB chunks, JSON on every channel, camera frames as JSON foxglove.CompressedImage
 * with the JPEG in base64), kept so tests can make recordings of the old layout and check that every
 * reader still takes them. Do not change what it writes.
 *
 * One MCAP file per episode. Written to `<dir>/<episode_id>.mcap.part` while the episode runs, then
 * ended (summary written), fsynced and renamed to its final name, so a `.part` file on disk always
 * means an episode that never finished. JSON messages throughout; log time is the agent clock's ns.
 */
import { open, rename, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { McapWriter } from "@mcap/core";
import type { CameraFrame, JointState, ObjectPose, Wrench } from "../../cell-agent/hardware/types.js";
import { FileHandleReadable, FileHandleWritable } from "../../cell-agent/recording/file-writable.js";
import { decodeCompressedImage } from "../../protocol/recording/foxglove-protobuf.js";
import { openRecordingReader } from "../../protocol/recording/recording-reader.js";
import {
  CAMERA_SYNC, EVENTS, FT_WRIST, JOINT_STATES, JOINT_TARGETS, META, OBJECT_POSES, type ChannelSpec,
} from "../../protocol/recording/recording-layout.js";

const time = { type: "object", properties: { sec: { type: "integer" }, nsec: { type: "integer" } } };
/** The JSON camera schema of the old layout. */
const COMPRESSED_IMAGE_SCHEMA = {
  schemaName: "foxglove.CompressedImage",
  schema: {
    type: "object", title: "foxglove.CompressedImage",
    properties: { timestamp: time, frame_id: { type: "string" }, data: { type: "string", contentEncoding: "base64" }, format: { type: "string" } },
  },
};

/** Flushed to disk once this big; a crashed recording is readable up to its last whole chunk. */
const CHUNK_BYTES = 256 * 1024;

function stamp(tNs: bigint) {
  return { sec: Number(tNs / 1_000_000_000n), nsec: Number(tNs % 1_000_000_000n) };
}

export class LegacyMcapRecorder {
  private readonly channels = new Map<string, number>();
  private readonly sequences = new Map<number, number>();
  private readonly schemas = new Map<string, number>();
  /** McapWriter calls must not overlap: every write is chained here. */
  private tail: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private closed = false;

  private constructor(
    private readonly handle: FileHandle,
    private readonly writer: McapWriter,
    readonly partPath: string,
    private readonly jointNames: readonly string[],
  ) {}

  /** Creates `<dir>/<episodeId>.mcap.part` and registers every channel the cell has instruments for. */
  static async create(dir: string, episodeId: string, options: { jointNames: readonly string[]; cameraNames: readonly string[] }): Promise<LegacyMcapRecorder> {
    const partPath = join(dir, `${episodeId}.mcap.part`);
    const handle = await open(partPath, "w");
    const writer = new McapWriter({ writable: new FileHandleWritable(handle), chunkSize: CHUNK_BYTES });
    const recorder = new LegacyMcapRecorder(handle, writer, partPath, options.jointNames);
    await writer.start({ profile: "", library: "assay-cell-agent" });
    for (const spec of [JOINT_STATES, JOINT_TARGETS, FT_WRIST, OBJECT_POSES, EVENTS, META]) await recorder.register(spec);
    for (const name of options.cameraNames) await recorder.register({ topic: `/camera/${name}`, ...COMPRESSED_IMAGE_SCHEMA });
    if (options.cameraNames.length > 1) await recorder.register(CAMERA_SYNC);
    return recorder;
  }

  private async register(spec: ChannelSpec): Promise<void> {
    let schemaId = this.schemas.get(spec.schemaName);
    if (schemaId === undefined) {
      schemaId = await this.writer.registerSchema({
        name: spec.schemaName, encoding: "jsonschema", data: new TextEncoder().encode(JSON.stringify(spec.schema)),
      });
      this.schemas.set(spec.schemaName, schemaId);
    }
    const channelId = await this.writer.registerChannel({ topic: spec.topic, schemaId, messageEncoding: "json", metadata: new Map() });
    this.channels.set(spec.topic, channelId);
  }

  private add(topic: string, logTimeNs: bigint, publishTimeNs: bigint, body: unknown): void {
    const channelId = this.channels.get(topic);
    if (channelId === undefined || this.closed) return;
    const sequence = (this.sequences.get(channelId) ?? 0) + 1;
    this.sequences.set(channelId, sequence);
    const data = new TextEncoder().encode(JSON.stringify(body));
    this.tail = this.tail.then(async () => {
      if (this.failure) return;
      try {
        await this.writer.addMessage({ channelId, sequence, logTime: logTimeNs, publishTime: publishTimeNs, data });
      } catch (error) {
        this.failure = error as Error;
      }
    });
  }

  jointStates(logTimeNs: bigint, state: JointState): void {
    this.add(JOINT_STATES.topic, logTimeNs, state.tNs, {
      timestamp: stamp(state.tNs), name: this.jointNames, position: state.positionRad, velocity: state.velocityRadS,
      effort: state.currentA, temperature_c: state.temperatureC,
    });
  }

  jointTargets(logTimeNs: bigint, positionRad: readonly number[]): void {
    this.add(JOINT_TARGETS.topic, logTimeNs, logTimeNs, { timestamp: stamp(logTimeNs), name: this.jointNames, position: positionRad });
  }

  camera(logTimeNs: bigint, name: string, frame: CameraFrame): void {
    this.add(`/camera/${name}`, logTimeNs, frame.tNs, {
      timestamp: stamp(frame.tNs), frame_id: name, data: Buffer.from(frame.jpeg).toString("base64"), format: "jpeg",
    });
  }

  /** The capture times of the frames several cameras took in one control step, and their skew. */
  cameraSync(logTimeNs: bigint, captureNs: ReadonlyMap<string, bigint>): void {
    const times = [...captureNs.values()];
    const skewNs = times.reduce((a, b) => (a > b ? a : b)) - times.reduce((a, b) => (a < b ? a : b));
    this.add(CAMERA_SYNC.topic, logTimeNs, logTimeNs, {
      timestamp: stamp(logTimeNs),
      capture_time: Object.fromEntries([...captureNs].map(([name, tNs]) => [name, stamp(tNs)])),
      skew_ms: Number(skewNs) / 1e6,
    });
  }

  wrench(logTimeNs: bigint, wrench: Wrench): void {
    const [fx, fy, fz] = wrench.forceN;
    const [tx, ty, tz] = wrench.torqueNm;
    this.add(FT_WRIST.topic, logTimeNs, wrench.tNs, {
      timestamp: stamp(wrench.tNs), force: { x: fx, y: fy, z: fz }, torque: { x: tx, y: ty, z: tz },
    });
  }

  objectPoses(logTimeNs: bigint, tNs: bigint, poses: readonly ObjectPose[]): void {
    const byName: Record<string, unknown> = {};
    for (const pose of poses) {
      const [x, y, z] = pose.positionM;
      const [qx, qy, qz, qw] = pose.orientation;
      byName[pose.name] = { position: { x, y, z }, orientation: { x: qx, y: qy, z: qz, w: qw } };
    }
    this.add(OBJECT_POSES.topic, logTimeNs, tNs, { timestamp: stamp(tNs), poses: byName });
  }

  event(logTimeNs: bigint, event: { tS: number; name: string; detail: string }): void {
    this.add(EVENTS.topic, logTimeNs, logTimeNs, { t_s: event.tS, name: event.name, detail: event.detail });
  }

  meta(logTimeNs: bigint, body: Record<string, unknown>): void {
    this.add(META.topic, logTimeNs, logTimeNs, body);
  }

  /** Waits for every queued message; throws the first write error. */
  async flush(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure;
  }

  /**
   * Ends the file (summary and footer), fsyncs, closes, and renames it to `finalPath`.
   * NOTE: call after the last message; messages added afterwards are dropped.
   */
  async finish(finalPath: string): Promise<void> {
    await this.flush();
    this.closed = true;
    await this.writer.end();
    await this.handle.sync();
    await this.handle.close();
    await rename(this.partPath, finalPath);
  }
}

/**
 * Rewrites a recording of today's layout in the old one (the bench's "same episode, previous layout"
 * size): JSON channels copied as they are, camera frames as JSON with base64 JPEG, no `/tf` or
 * `/robot_description`, uncompressed 256 KiB chunks, through @mcap/core's McapWriter as before.
 */
export async function rewriteInLegacyLayout(sourcePath: string, targetPath: string): Promise<void> {
  const source = await open(sourcePath, "r");
  const target = await open(targetPath, "w");
  try {
    const reader = await openRecordingReader(new FileHandleReadable(source));
    const writer = new McapWriter({ writable: new FileHandleWritable(target), chunkSize: CHUNK_BYTES });
    await writer.start({ profile: "", library: "assay-cell-agent" });
    const channelIds = new Map<number, number>();
    const schemaIds = new Map<string, number>();
    for (const channel of reader.channelsById.values()) {
      if (channel.topic === "/tf" || channel.topic === "/robot_description") continue;
      const camera = channel.topic.startsWith("/camera/");
      const schema = reader.schemasById.get(channel.schemaId)!;
      let schemaId = schemaIds.get(schema.name);
      if (schemaId === undefined) {
        schemaId = await writer.registerSchema({
          name: schema.name, encoding: "jsonschema", data: camera ? new TextEncoder().encode(JSON.stringify(COMPRESSED_IMAGE_SCHEMA.schema)) : schema.data,
        });
        schemaIds.set(schema.name, schemaId);
      }
      channelIds.set(channel.id, await writer.registerChannel({ topic: channel.topic, schemaId, messageEncoding: "json", metadata: new Map() }));
    }
    for await (const message of reader.readMessages({ validateCrcs: false })) {
      const channelId = channelIds.get(message.channelId);
      if (channelId === undefined) continue;
      const channel = reader.channelsById.get(message.channelId)!;
      let data = message.data;
      if (channel.messageEncoding === "protobuf") {
        const image = decodeCompressedImage(message.data);
        data = new TextEncoder().encode(JSON.stringify({ timestamp: image.timestamp, frame_id: image.frameId, data: Buffer.from(image.data).toString("base64"), format: image.format }));
      }
      await writer.addMessage({ ...message, channelId, data });
    }
    await writer.end();
  } finally {
    await source.close();
    await target.close();
  }
}

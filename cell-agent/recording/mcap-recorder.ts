/**
 * One MCAP file per episode. Written to `<dir>/<episode_id>.mcap.part` while the episode runs, then
 * ended (summary written), fsynced and renamed to its final name, so a `.part` file on disk always
 * means an episode that never finished. Written by chunked-mcap-writer.ts (native CRCs); chunks
 * are zstd-compressed (protocol/recording/mcap-compression.ts). JSON messages, except camera frames and `/tf` (Foxglove's schemas in protobuf); log time is the
 * agent clock's ns. For a model whose kinematics Assay knows, the first joint state also writes the
 * robot's URDF on `/robot_description`, and every joint state the links' transforms on `/tf`.
 */
import { open, rename, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { encodeCompressedImage, encodeFrameTransforms } from "../../protocol/recording/foxglove-protobuf.js";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import {
  CAMERA_SYNC, COMPRESSED_IMAGE_SCHEMA, EVENTS, FT_WRIST, JOINT_STATES, JOINT_TARGETS, META, MessageEncoding, OBJECT_POSES, ROBOT_DESCRIPTION, SchemaEncoding, TF,
  cameraTopic, type ChannelSpec,
} from "../../protocol/recording/recording-layout.js";
import type { CameraFrame, JointState, ObjectPose, Wrench } from "../hardware/types.js";
import { startChunkCompressor, type ChunkCompressor } from "./chunk-compressor.js";
import { ChunkedMcapWriter } from "./chunked-mcap-writer.js";
import { FileHandleWritable } from "./file-writable.js";
import { robotDescriptionFor, type RobotDescription } from "./robot-description.js";

/**
 * Compressed and flushed to disk once this big (uncompressed); a crashed recording is readable up to
 * its last whole chunk. 1 MiB holds half a second (640x480 frames) to two seconds (the simulated
 * cells' frames) of two cameras at 30 Hz: enough for zstd to find what consecutive frames share.
 */
const CHUNK_BYTES = 1024 * 1024;

function stamp(tNs: bigint) {
  return { sec: Number(tNs / 1_000_000_000n), nsec: Number(tNs % 1_000_000_000n) };
}

export class McapRecorder {
  private readonly channels = new Map<string, number>();
  private readonly sequences = new Map<number, number>();
  private readonly schemas = new Map<string, number>();
  /**
   * Writer calls must not overlap: while the writer makes the recorder wait (a chunk's compression or
   * write), later messages chain here; otherwise a message goes to the writer at once, with no promise.
   */
  private tail: Promise<void> | undefined;
  private readonly text = new TextEncoder();
  private failure: Error | undefined;
  private closed = false;
  private describedRobot = false;

  private constructor(
    private readonly handle: FileHandle,
    private readonly writer: ChunkedMcapWriter,
    /** The compressor this recorder started (and closes); none when it was given one or compresses otherwise. */
    private readonly ownCompressor: ChunkCompressor | undefined,
    readonly partPath: string,
    private readonly jointNames: readonly string[],
    private readonly robot: RobotDescription | undefined,
  ) {}

  /**
   * Creates `<dir>/<episodeId>.mcap.part` and registers every channel the cell has instruments for.
   * `robotModel` (the catalogue id) adds `/tf` and `/robot_description` when Assay knows its kinematics.
   * `compress`: "worker" (default) compresses chunks with zstd on a worker thread (chunk-compressor.ts),
   * "inline" on this thread, "none" stores them uncompressed. `compressor`: the agent's long-lived
   * worker for "worker" (the recorder leaves it running); without one the recorder starts its own and
   * stops it when finished, paying the worker's start (up to a second on a loaded cell PC) each episode.
   */
  static async create(
    dir: string, episodeId: string,
    options: { jointNames: readonly string[]; cameraNames: readonly string[]; robotModel?: string; compress?: "worker" | "inline" | "none"; compressor?: ChunkCompressor },
  ): Promise<McapRecorder> {
    const mode = options.compress ?? "worker";
    const ownCompressor = mode === "worker" && !options.compressor ? startChunkCompressor() : undefined;
    const compressor = mode === "worker" ? (options.compressor ?? ownCompressor) : undefined;
    const compressChunk = compressor ? compressor.compress : mode === "inline" ? (await loadMcapCompression()).compressChunk : undefined;
    const partPath = join(dir, `${episodeId}.mcap.part`);
    const handle = await open(partPath, "w").catch(async (error: unknown) => {
      await ownCompressor?.close();
      throw error;
    });
    const writer = new ChunkedMcapWriter({ writable: new FileHandleWritable(handle), chunkSize: CHUNK_BYTES, compressChunk });
    const robot = robotDescriptionFor(options.robotModel, options.jointNames);
    const recorder = new McapRecorder(handle, writer, ownCompressor, partPath, options.jointNames, robot);
    await writer.start({ profile: "", library: "assay-cell-agent" });
    for (const spec of [JOINT_STATES, JOINT_TARGETS, FT_WRIST, OBJECT_POSES, EVENTS, META]) await recorder.register(spec);
    if (robot) for (const spec of [ROBOT_DESCRIPTION, TF]) await recorder.register(spec);
    for (const name of options.cameraNames) await recorder.register({ topic: cameraTopic(name), ...COMPRESSED_IMAGE_SCHEMA });
    if (options.cameraNames.length > 1) await recorder.register(CAMERA_SYNC);
    // The Header and every Schema and Channel in one write, before any message.
    await writer.flush();
    return recorder;
  }

  private async register(spec: ChannelSpec): Promise<void> {
    const protobuf = "protobuf" in spec.schema ? (spec.schema.protobuf as Uint8Array) : undefined;
    let schemaId = this.schemas.get(spec.schemaName);
    if (schemaId === undefined) {
      schemaId = await this.writer.registerSchema({
        name: spec.schemaName, encoding: protobuf ? SchemaEncoding.protobuf : SchemaEncoding.jsonschema, data: protobuf ?? new TextEncoder().encode(JSON.stringify(spec.schema)),
      });
      this.schemas.set(spec.schemaName, schemaId);
    }
    const channelId = await this.writer.registerChannel({ topic: spec.topic, schemaId, messageEncoding: protobuf ? MessageEncoding.protobuf : MessageEncoding.json, metadata: new Map() });
    this.channels.set(spec.topic, channelId);
  }

  /** Queues a message: `body` is JSON-encoded unless it is already bytes (protobuf). */
  private add(topic: string, logTimeNs: bigint, publishTimeNs: bigint, body: unknown): void {
    const channelId = this.channels.get(topic);
    if (channelId === undefined || this.closed) return;
    const sequence = (this.sequences.get(channelId) ?? 0) + 1;
    this.sequences.set(channelId, sequence);
    const data = body instanceof Uint8Array ? body : this.text.encode(JSON.stringify(body));
    const message = { channelId, sequence, logTime: logTimeNs, publishTime: publishTimeNs, data };
    if (this.tail) this.chain(this.tail.then(() => this.write(message)));
    else {
      const waiting = this.write(message);
      if (waiting) this.chain(waiting);
    }
  }

  /** Hands a message to the writer; answers a promise (never rejected) only when it must be waited for. */
  private write(message: Parameters<ChunkedMcapWriter["addMessage"]>[0]): Promise<void> | undefined {
    if (this.failure) return undefined;
    try {
      return this.writer.addMessage(message)?.catch((error: unknown) => {
        this.failure ??= error as Error;
      });
    } catch (error) {
      this.failure ??= error as Error;
      return undefined;
    }
  }

  private chain(next: Promise<void>): void {
    this.tail = next;
    void next.then(() => {
      if (this.tail === next) this.tail = undefined;
    });
  }

  jointStates(logTimeNs: bigint, state: JointState): void {
    this.add(JOINT_STATES.topic, logTimeNs, state.tNs, {
      timestamp: stamp(state.tNs), name: this.jointNames, position: state.positionRad, velocity: state.velocityRadS,
      effort: state.currentA, temperature_c: state.temperatureC,
    });
    if (!this.robot) return;
    if (!this.describedRobot) {
      this.describedRobot = true;
      this.add(ROBOT_DESCRIPTION.topic, logTimeNs, logTimeNs, { data: this.robot.urdf });
    }
    this.add(TF.topic, logTimeNs, state.tNs, encodeFrameTransforms(this.robot.transforms(state.positionRad, stamp(state.tNs))));
  }

  jointTargets(logTimeNs: bigint, positionRad: readonly number[]): void {
    this.add(JOINT_TARGETS.topic, logTimeNs, logTimeNs, { timestamp: stamp(logTimeNs), name: this.jointNames, position: positionRad });
  }

  camera(logTimeNs: bigint, name: string, frame: CameraFrame): void {
    this.add(cameraTopic(name), logTimeNs, frame.tNs, encodeCompressedImage({ timestamp: stamp(frame.tNs), frameId: name, data: frame.jpeg, format: "jpeg" }));
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
    while (this.tail) await this.tail;
    if (this.failure) throw this.failure;
  }

  /**
   * Ends the file (summary and footer), fsyncs, closes, and renames it to `finalPath`.
   * NOTE: call after the last message; messages added afterwards are dropped.
   */
  async finish(finalPath: string): Promise<void> {
    try {
      await this.flush();
      this.closed = true;
      await this.writer.end();
    } finally {
      await this.ownCompressor?.close();
    }
    await this.handle.sync();
    await this.handle.close();
    await rename(this.partPath, finalPath);
  }
}

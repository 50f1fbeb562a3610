/**
 * An episode's control steps read back from its MCAP, one at a time: what the step measured, what
 * it commanded, and the latest frame of every camera. The agent writes a step's messages at one log
 * time (joint states, then the cameras it captured, then the command), so a step is the set of
 * messages sharing a log time that holds a joint state.
 *
 * - `action` is the commanded target; a step that sent none (the agent held position) reports the
 *   measured position, which is what holding commands, with `commanded: false`.
 * - `images` holds each camera's latest frame (JPEG); a camera slower than the control loop repeats
 *   its last frame, and one that has sent nothing yet is absent.
 *
 * Both recording layouts read the same: today's (zstd chunks, camera frames as protobuf
 * `foxglove.CompressedImage`) and the one before it (uncompressed chunks, JSON frames with the JPEG in
 * base64). Chunk CRCs are not re-checked: a stored recording's SHA-256 was verified when the cell
 * uploaded it, which covers every byte the CRCs do.
 *
 * Messages are read chunk by chunk without copies (recording-messages.ts) where the recording's
 * chunks are in time order, as a cell writes them; through @mcap/core otherwise.
 */
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import type { McapIndexedReader } from "@mcap/core";
import { RecordingTopic, cameraNameOf, cameraTopic } from "../../protocol/recording/recording-layout.js";
import { cameraJpeg, openRecordingReader } from "../../protocol/recording/recording-reader.js";
import type { ChunkDecompressor } from "./chunk-decompressor.js";
import { RecordingMessages } from "./recording-messages.js";

export interface EpisodeStep {
  /** Step number from 0. */
  index: number;
  /** Agent clock at the step. */
  tNs: bigint;
  /** Seconds since the first step. */
  tS: number;
  state: number[];
  velocity: number[];
  action: number[];
  commanded: boolean;
  /** Camera name -> JPEG bytes of its latest frame. */
  images: Map<string, Uint8Array>;
  /** Cameras whose frame was captured at this step. */
  fresh: Set<string>;
}

/**
 * How a recording is read. `decompressor`: chunks are decompressed into its reused buffers (an export
 * reading many episodes in turn), so what was read (steps, their frames) stays valid only until its
 * `recycle()`; without one, every chunk gets a buffer of its own.
 */
export interface RecordingReadOptions {
  decompressor?: ChunkDecompressor;
}

/** What a recording holds, without its contents: read from the summary and the first joint state. */
export interface EpisodeShape {
  jointNames: string[];
  /** Camera names, from the `/camera/<name>` channels, in channel order. */
  cameras: string[];
  /** Number of control steps (messages on /joint_states_measured). */
  steps: number;
  /** Frames each camera recorded (messages on `/camera/<name>`), by camera name. */
  cameraFrames: Map<string, number>;
}

export interface EpisodeHeader extends EpisodeShape {
  /** The `/meta` message with phase "start" (firmware, calibration age, seed, perturbations realized...). */
  startMeta: Record<string, unknown>;
  /** The `/meta` message with phase "end". */
  endMeta: Record<string, unknown>;
  events: Array<{ t_s: number; name: string; detail: string }>;
}

const SOURCE = [RecordingTopic.jointStates, RecordingTopic.jointTargets];

/** @mcap/core's random-access reader over an open file. */
export function fileReadable(handle: FileHandle) {
  return {
    size: async () => BigInt((await handle.stat()).size),
    read: async (offset: bigint, size: bigint) => {
      const buffer = new Uint8Array(Number(size));
      let done = 0;
      while (done < buffer.length) {
        const { bytesRead } = await handle.read(buffer, done, buffer.length - done, Number(offset) + done);
        if (bytesRead === 0) throw new Error(`MCAP ended at ${Number(offset) + done} bytes; the reader wanted ${size} bytes from ${offset}`);
        done += bytesRead;
      }
      return buffer;
    },
  };
}

/** The messages of `topics` in log-time order, with each one's topic and encoding. */
async function* messagesOf(reader: McapIndexedReader, messages: RecordingMessages, topics: readonly string[]) {
  const wanted = new Set(topics);
  if (messages.ordered) {
    const channels = new Set([...reader.channelsById.values()].filter((c) => wanted.has(c.topic)).map((c) => c.id));
    for await (const message of messages.read(channels)) {
      const channel = reader.channelsById.get(message.channelId)!;
      yield { topic: channel.topic, encoding: channel.messageEncoding, logTime: message.logTime, data: message.data };
    }
    return;
  }
  for await (const message of reader.readMessages({ topics: [...topics], validateCrcs: false })) {
    const channel = reader.channelsById.get(message.channelId)!;
    yield { topic: channel.topic, encoding: channel.messageEncoding, logTime: message.logTime, data: message.data };
  }
}

async function shapeOf(reader: McapIndexedReader, messages: RecordingMessages): Promise<EpisodeShape> {
  const channels = [...reader.channelsById.values()];
  const cameraChannels = channels.filter((c) => cameraNameOf(c.topic) !== null);
  const cameras = cameraChannels.map((c) => cameraNameOf(c.topic)!);
  const statesChannel = channels.find((c) => c.topic === RecordingTopic.jointStates);
  const steps = statesChannel ? Number(reader.statistics?.channelMessageCounts.get(statesChannel.id) ?? 0n) : 0;
  const cameraFrames = new Map(cameraChannels.map((c) => [cameraNameOf(c.topic)!, Number(reader.statistics?.channelMessageCounts.get(c.id) ?? 0n)]));
  let jointNames: string[] = [];
  for await (const message of messagesOf(reader, messages, [RecordingTopic.jointStates])) {
    const body = JSON.parse(new TextDecoder().decode(message.data)) as { name?: string[] };
    jointNames = body.name ?? [];
    break;
  }
  return { jointNames, cameras, steps, cameraFrames };
}

/**
 * An episode's shape alone: its summary and first chunk, where `EpisodeRecording.open` also reads
 * `/meta` and `/events`, which decompresses nearly every chunk. For a pass over many recordings
 * before reading them (an export's common layout).
 */
export async function readEpisodeShape(path: string, options: RecordingReadOptions = {}): Promise<EpisodeShape> {
  const handle = await open(path, "r");
  try {
    const reader = await openRecordingReader(fileReadable(handle));
    return await shapeOf(reader, new RecordingMessages(handle, reader, options.decompressor));
  } finally {
    await handle.close();
  }
}

/**
 * An episode recording opened for reading; `close()` when done. `open` reads its header (shape,
 * `/meta`, `/events`); `openForSteps` its shape only, for a reader that wants the steps and nothing
 * else (the training exports), which saves a pass over every chunk.
 */
export class EpisodeRecording<Header extends EpisodeShape = EpisodeHeader> {
  private constructor(
    private readonly handle: FileHandle,
    private readonly reader: McapIndexedReader,
    private readonly messages: RecordingMessages,
    readonly header: Header,
  ) {}

  static async open(path: string): Promise<EpisodeRecording<EpisodeHeader>> {
    return EpisodeRecording.opened(path, async (reader, messages) => {
      const shape = await shapeOf(reader, messages);
      const decoder = new TextDecoder();
      let startMeta: Record<string, unknown> = {};
      let endMeta: Record<string, unknown> = {};
      const events: EpisodeHeader["events"] = [];
      for await (const message of messagesOf(reader, messages, [RecordingTopic.meta, RecordingTopic.events])) {
        const body = JSON.parse(decoder.decode(message.data)) as Record<string, any>;
        if (message.topic === RecordingTopic.events) events.push({ t_s: body.t_s, name: body.name, detail: body.detail });
        else if (body.phase === "start") startMeta = body;
        else if (body.phase === "end") endMeta = body;
      }
      return { ...shape, startMeta, endMeta, events };
    });
  }

  static async openForSteps(path: string, options: RecordingReadOptions = {}): Promise<EpisodeRecording<EpisodeShape>> {
    return EpisodeRecording.opened(path, shapeOf, options);
  }

  private static async opened<H extends EpisodeShape>(
    path: string,
    readHeader: (reader: McapIndexedReader, messages: RecordingMessages) => Promise<H>,
    options: RecordingReadOptions = {},
  ): Promise<EpisodeRecording<H>> {
    const handle = await open(path, "r");
    try {
      const reader = await openRecordingReader(fileReadable(handle));
      const messages = new RecordingMessages(handle, reader, options.decompressor);
      return new EpisodeRecording(handle, reader, messages, await readHeader(reader, messages));
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The control steps in order. */
  async *steps(): AsyncGenerator<EpisodeStep> {
    const decoder = new TextDecoder();
    const topics = [...SOURCE, ...this.header.cameras.map(cameraTopic)];
    const images = new Map<string, Uint8Array>();
    let group: Array<{ topic: string; encoding: string; data: Uint8Array }> = [];
    let groupTNs: bigint | undefined;
    let firstTNs: bigint | undefined;
    let index = 0;
    const flush = (): EpisodeStep | undefined => {
      const fresh = new Set<string>();
      let state: Record<string, any> | undefined;
      let target: Record<string, any> | undefined;
      for (const { topic, encoding, data } of group) {
        if (topic === RecordingTopic.jointStates) state = JSON.parse(decoder.decode(data)) as Record<string, any>;
        else if (topic === RecordingTopic.jointTargets) target = JSON.parse(decoder.decode(data)) as Record<string, any>;
        else {
          const camera = cameraNameOf(topic)!;
          images.set(camera, cameraJpeg(encoding, data));
          fresh.add(camera);
        }
      }
      group = [];
      if (!state || groupTNs === undefined) return undefined;
      firstTNs ??= groupTNs;
      const position = (state.position ?? []) as number[];
      return {
        index: index++,
        tNs: groupTNs,
        tS: Number(groupTNs - firstTNs) / 1e9,
        state: position,
        velocity: (state.velocity ?? []) as number[],
        action: target ? ((target.position ?? []) as number[]) : position,
        commanded: target !== undefined,
        images: new Map(images),
        fresh,
      };
    };
    for await (const message of messagesOf(this.reader, this.messages, topics)) {
      if (groupTNs !== undefined && message.logTime !== groupTNs) {
        const step = flush();
        if (step) yield step;
      }
      groupTNs = message.logTime;
      group.push(message);
    }
    const last = flush();
    if (last) yield last;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

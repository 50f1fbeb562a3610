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
 */
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import type { McapIndexedReader } from "@mcap/core";
import { RecordingTopic, cameraNameOf, cameraTopic } from "../../protocol/recording/recording-layout.js";
import { cameraJpeg, openRecordingReader } from "../../protocol/recording/recording-reader.js";

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

async function shapeOf(reader: McapIndexedReader): Promise<EpisodeShape> {
  const channels = [...reader.channelsById.values()];
  const cameraChannels = channels.filter((c) => cameraNameOf(c.topic) !== null);
  const cameras = cameraChannels.map((c) => cameraNameOf(c.topic)!);
  const statesChannel = channels.find((c) => c.topic === RecordingTopic.jointStates);
  const steps = statesChannel ? Number(reader.statistics?.channelMessageCounts.get(statesChannel.id) ?? 0n) : 0;
  const cameraFrames = new Map(cameraChannels.map((c) => [cameraNameOf(c.topic)!, Number(reader.statistics?.channelMessageCounts.get(c.id) ?? 0n)]));
  let jointNames: string[] = [];
  for await (const message of reader.readMessages({ topics: [RecordingTopic.jointStates], validateCrcs: false })) {
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
export async function readEpisodeShape(path: string): Promise<EpisodeShape> {
  const handle = await open(path, "r");
  try {
    return await shapeOf(await openRecordingReader(fileReadable(handle)));
  } finally {
    await handle.close();
  }
}

/** An episode recording opened for reading; `close()` when done. */
export class EpisodeRecording {
  private constructor(private readonly handle: FileHandle, private readonly reader: McapIndexedReader, readonly header: EpisodeHeader) {}

  static async open(path: string): Promise<EpisodeRecording> {
    const handle = await open(path, "r");
    try {
      const reader = await openRecordingReader(fileReadable(handle));
      const decoder = new TextDecoder();
      let startMeta: Record<string, unknown> = {};
      let endMeta: Record<string, unknown> = {};
      const events: EpisodeHeader["events"] = [];
      for await (const message of reader.readMessages({ topics: [RecordingTopic.meta, RecordingTopic.events], validateCrcs: false })) {
        const body = JSON.parse(decoder.decode(message.data)) as Record<string, any>;
        if (reader.channelsById.get(message.channelId)!.topic === RecordingTopic.events) events.push({ t_s: body.t_s, name: body.name, detail: body.detail });
        else if (body.phase === "start") startMeta = body;
        else if (body.phase === "end") endMeta = body;
      }
      return new EpisodeRecording(handle, reader, { ...(await shapeOf(reader)), startMeta, endMeta, events });
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
    for await (const message of this.reader.readMessages({ topics, validateCrcs: false })) {
      if (groupTNs !== undefined && message.logTime !== groupTNs) {
        const step = flush();
        if (step) yield step;
      }
      groupTNs = message.logTime;
      const channel = this.reader.channelsById.get(message.channelId)!;
      group.push({ topic: channel.topic, encoding: channel.messageEncoding, data: message.data });
    }
    const last = flush();
    if (last) yield last;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

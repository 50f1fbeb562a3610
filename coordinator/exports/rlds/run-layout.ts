/**
 * The shape every episode of an RLDS export shares, read before anything is written: the joints
 * (state and action size) and the cameras with their frame sizes. TFDS declares one feature set for
 * a dataset, so an episode whose joints or cameras differ from the first one's cannot go in, and the
 * export fails before it writes a byte instead of leaving half a dataset behind.
 */
import type { ExportEpisode } from "../export-input.js";
import { EpisodeRecording, readEpisodeShape, type RecordingReadOptions } from "../episode-steps.js";
import { type FrameSize, jpegSize } from "./jpeg-frames.js";

export interface CameraLayout extends FrameSize {
  name: string;
}

export interface RunLayout {
  /** Joint order of `observation/state` and `action`. */
  jointNames: string[];
  /** Cameras sorted by name, each with the size of its frames. */
  cameras: CameraLayout[];
}

/** Names that would collide with the other observation keys or break TFDS's `/`-joined feature paths. */
function checkCameraName(name: string, episode: ExportEpisode): void {
  if (name === "state" || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new Error(
      `episode ${episode.episodeId} has a camera named ${JSON.stringify(name)}, which cannot be an RLDS observation key ` +
        `(use letters, digits, "_", "." or "-", and not "state")`,
    );
  }
}

function describeJoints(names: readonly string[]): string {
  return `${names.length} joints [${names.join(", ")}]`;
}

function describeCameras(names: readonly string[]): string {
  return names.length === 0 ? "no cameras" : `cameras [${[...names].sort().join(", ")}]`;
}

/**
 * Reads every episode's shape (summary and first chunk) and checks that its joints and cameras match the first episode's;
 * reads each camera's frame size from the first episode that has a frame of it.
 * @throws Error naming the episode and what differs, or the camera no episode has a frame of
 */
export async function readRunLayout(episodes: readonly ExportEpisode[], options: RecordingReadOptions = {}): Promise<RunLayout> {
  let first: { episode: ExportEpisode; jointNames: string[]; cameras: string[] } | undefined;
  const sizes = new Map<string, FrameSize>();
  for (const episode of episodes) {
    // Nothing read from the previous episode is held (names and sizes are copied out of it).
    options.decompressor?.recycle();
    // The shape only (summary and first chunk): the export reads each recording whole once, later.
    const { jointNames, cameras } = await readEpisodeShape(episode.mcap.path, options);
    if (jointNames.length === 0) {
      throw new Error(`episode ${episode.episodeId} (${episode.mcap.fileName}) has no joint states, so it has no steps to export; leave it out`);
    }
    cameras.forEach((name) => checkCameraName(name, episode));
    if (!first) {
      first = { episode, jointNames: [...jointNames], cameras: [...cameras] };
    } else {
      const other = first.episode.episodeId;
      if (jointNames.length !== first.jointNames.length || jointNames.some((n, i) => n !== first!.jointNames[i])) {
        throw new Error(
          `episode ${episode.episodeId} has ${describeJoints(jointNames)} but the first episode ${other} has ` +
            `${describeJoints(first.jointNames)}; an RLDS dataset has one state and action layout, so export these episodes separately`,
        );
      }
      const sameCameras = cameras.length === first.cameras.length && cameras.every((c) => first!.cameras.includes(c));
      if (!sameCameras) {
        throw new Error(
          `episode ${episode.episodeId} has ${describeCameras(cameras)} but the first episode ${other} has ` +
            `${describeCameras(first.cameras)}; an RLDS dataset has one observation layout, so export these episodes separately`,
        );
      }
    }
    const missing = cameras.filter((c) => !sizes.has(c));
    if (missing.length > 0) await readFrameSizes(episode.mcap.path, missing, sizes, options);
  }
  options.decompressor?.recycle();
  if (!first) throw new Error("no episodes to export: an RLDS dataset needs at least one episode (TFDS cannot read an empty split)");
  const unseen = first.cameras.filter((c) => !sizes.has(c));
  if (unseen.length > 0) {
    throw new Error(
      `camera ${unseen.join(", ")} sent no frame in any of the ${episodes.length} episodes, so its image size is unknown ` +
        `and its RLDS Image feature cannot be declared`,
    );
  }
  return {
    jointNames: first.jointNames,
    cameras: [...first.cameras].sort().map((name) => ({ name, ...sizes.get(name)! })),
  };
}

/** Reads steps until each camera in `missing` has shown a frame (usually the first step). */
async function readFrameSizes(path: string, missing: string[], sizes: Map<string, FrameSize>, options: RecordingReadOptions): Promise<void> {
  const recording = await EpisodeRecording.openForSteps(path, options);
  try {
    const wanted = new Set(missing);
    for await (const step of recording.steps()) {
      for (const camera of wanted) {
        const frame = step.images.get(camera);
        if (!frame) continue;
        sizes.set(camera, jpegSize(frame));
        wanted.delete(camera);
      }
      if (wanted.size === 0) return;
    }
  } finally {
    await recording.close();
  }
}

/**
 * The shape every episode of an RLDS export shares, read from the first episode before anything is
 * written: the joints (state and action size) and the cameras with their frame sizes. TFDS declares
 * one feature set for a dataset, so an episode whose joints or cameras differ from the first one's
 * cannot go in: the export fails when the writer reaches it, naming it, and leaves no dataset behind
 * (write-rlds.ts removes what it wrote).
 */
import type { ExportEpisode } from "../export-input.js";
import { EpisodeRecording, readEpisodeShape, type EpisodeShape, type RecordingReadOptions } from "../episode-steps.js";
import { type FrameSize, jpegSize } from "./jpeg-frames.js";

export interface CameraLayout extends FrameSize {
  name: string;
}

export interface RunLayout {
  /** The episode the layout was read from, named when another episode differs. */
  firstEpisodeId: string;
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
 * The layout of the first episode (its joints and cameras), with each camera's frame size from the
 * first episode that has a frame of it (usually the first episode itself). Later episodes are checked
 * against it with `checkEpisodeShape` as the writer opens them, so each recording's summary and first
 * chunk are read once, not twice (a separate pass over 100 README episodes cost 0.22-0.34 s of CPU);
 * only the episodes read here for frame sizes are checked here.
 * @throws Error naming the episode and what differs, or the camera no episode has a frame of
 */
export async function readRunLayout(episodes: readonly ExportEpisode[], options: RecordingReadOptions = {}): Promise<RunLayout> {
  if (episodes.length === 0) throw new Error("no episodes to export: an RLDS dataset needs at least one episode (TFDS cannot read an empty split)");
  const first = episodes[0];
  let layout: RunLayout | undefined;
  const sizes = new Map<string, FrameSize>();
  for (const episode of episodes) {
    // Nothing read from the previous episode is held (names and sizes are copied out of it).
    options.decompressor?.recycle();
    // The shape only (summary and first chunk): the export reads each recording whole once, later.
    const shape = await readEpisodeShape(episode.mcap.path, options);
    if (!layout) {
      checkEpisodeShape(undefined, episode, shape);
      layout = { firstEpisodeId: first.episodeId, jointNames: [...shape.jointNames], cameras: shape.cameras.map((name) => ({ name, width: 0, height: 0 })) };
    } else {
      checkEpisodeShape(layout, episode, shape);
    }
    const missing = shape.cameras.filter((c) => !sizes.has(c));
    if (missing.length > 0) await readFrameSizes(episode.mcap.path, missing, sizes, options);
    if (layout.cameras.every((c) => sizes.has(c.name))) break;
  }
  options.decompressor?.recycle();
  const unseen = layout!.cameras.map((c) => c.name).filter((c) => !sizes.has(c));
  if (unseen.length > 0) {
    throw new Error(
      `camera ${unseen.join(", ")} sent no frame in any of the ${episodes.length} episodes, so its image size is unknown ` +
        `and its RLDS Image feature cannot be declared`,
    );
  }
  return {
    firstEpisodeId: layout!.firstEpisodeId,
    jointNames: layout!.jointNames,
    cameras: layout!.cameras.map((c) => c.name).sort().map((name) => ({ name, ...sizes.get(name)! })),
  };
}

/**
 * Checks an episode's shape: it has joint states, its camera names can be RLDS keys, and (given the
 * run's layout, read from the first episode) its joints and cameras are the first episode's.
 * @throws Error naming the episode and what differs
 */
export function checkEpisodeShape(layout: RunLayout | undefined, episode: ExportEpisode, shape: EpisodeShape): void {
  const { jointNames, cameras } = shape;
  if (jointNames.length === 0) {
    throw new Error(`episode ${episode.episodeId} (${episode.mcap.fileName}) has no joint states, so it has no steps to export; leave it out`);
  }
  cameras.forEach((name) => checkCameraName(name, episode));
  if (!layout) return;
  const other = layout.firstEpisodeId;
  if (jointNames.length !== layout.jointNames.length || jointNames.some((n, i) => n !== layout.jointNames[i])) {
    throw new Error(
      `episode ${episode.episodeId} has ${describeJoints(jointNames)} but the first episode ${other} has ` +
        `${describeJoints(layout.jointNames)}; an RLDS dataset has one state and action layout, so export these episodes separately`,
    );
  }
  const firstCameras = layout.cameras.map((c) => c.name);
  const sameCameras = cameras.length === firstCameras.length && cameras.every((c) => firstCameras.includes(c));
  if (!sameCameras) {
    throw new Error(
      `episode ${episode.episodeId} has ${describeCameras(cameras)} but the first episode ${other} has ` +
        `${describeCameras(firstCameras)}; an RLDS dataset has one observation layout, so export these episodes separately`,
    );
  }
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

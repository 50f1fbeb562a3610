/**
 * The dataset's `features` in `meta/info.json`, declared the way LeRobot's recorder declares a
 * robot's (`hw_to_dataset_features`, `DEFAULT_FEATURES`, `get_video_info`): `action` and
 * `observation.state` float32 vectors named by joint, one `observation.images.<camera>` video per
 * camera, then the five bookkeeping columns. They come from the first episode; a later episode
 * with other joints or cameras cannot share the table.
 */
import { videoSize, type CameraGeometry, type VideoEncoding } from "./camera-encoder-process.js";

export interface LeRobotFeature {
  dtype: string;
  shape: number[];
  names: string[] | null;
  info?: Record<string, unknown>;
}

export type LeRobotFeatures = Record<string, LeRobotFeature>;

export interface CameraFeature extends CameraGeometry {
  /** The camera's name in the recording (`/camera/<name>`). */
  name: string;
  /** `observation.images.<name>`. */
  videoKey: string;
  /** How the camera's videos are encoded: the cell's settings where they are copied, else LeRobot's. */
  encoding: VideoEncoding;
}

/** `lerobot.utils.constants.DEFAULT_FEATURES`. */
export const DEFAULT_FEATURES: LeRobotFeatures = {
  timestamp: { dtype: "float32", shape: [1], names: null },
  frame_index: { dtype: "int64", shape: [1], names: null },
  episode_index: { dtype: "int64", shape: [1], names: null },
  index: { dtype: "int64", shape: [1], names: null },
  task_index: { dtype: "int64", shape: [1], names: null },
};

/** The video feature key of a camera; LeRobot rejects feature names holding "/". */
export function cameraVideoKey(camera: string): string {
  if (camera.includes("/")) throw new Error(`camera "${camera}" cannot become a LeRobot feature: feature names must not contain "/"`);
  return `observation.images.${camera}`;
}

/**
 * A video feature as LeRobot writes it once the first episode is encoded: the recorder's
 * `is_depth_map`, then what `get_video_info` probes from the stream, then the encoder settings.
 */
function videoFeature(camera: CameraGeometry, encoding: VideoEncoding, fps: number): LeRobotFeature {
  const { widthPx, heightPx } = videoSize(camera);
  return {
    dtype: "video",
    shape: [heightPx, widthPx, 3],
    names: ["height", "width", "channels"],
    info: {
      is_depth_map: false,
      "video.height": heightPx,
      "video.width": widthPx,
      "video.codec": encoding.codecName,
      "video.pix_fmt": encoding.pixFmt,
      "video.fps": fps,
      "video.channels": 3,
      has_audio: false,
      "video.g": encoding.gop,
      "video.crf": encoding.crf,
      "video.preset": encoding.preset,
      "video.fast_decode": 0,
      // The only backend LeRobot accepts when it rebuilds an encoder from these fields; PyAV runs
      // the same libav libx264 the ffmpeg binary used here.
      "video.video_backend": "pyav",
      "video.extra_options": {},
    },
  };
}

/** All features, in the order LeRobot's recorder lists them. */
export function datasetFeatures(jointNames: string[], cameras: CameraFeature[], fps: number): LeRobotFeatures {
  const vector: LeRobotFeature = { dtype: "float32", shape: [jointNames.length], names: [...jointNames] };
  const features: LeRobotFeatures = { action: vector, "observation.state": { ...vector, names: [...jointNames] } };
  for (const camera of cameras) features[camera.videoKey] = videoFeature(camera, camera.encoding, fps);
  return { ...features, ...DEFAULT_FEATURES };
}

/**
 * Throws when an episode's recording does not fit the features taken from the first episode:
 * another number of joints, or another set of cameras.
 */
export function checkEpisodeFits(
  episode: { label: string; jointNames: string[]; cameras: string[] },
  first: { label: string; jointNames: string[]; cameras: string[] },
): void {
  if (episode.jointNames.length !== first.jointNames.length) {
    throw new Error(
      `episode ${episode.label} has ${episode.jointNames.length} joints [${episode.jointNames.join(", ")}] but the dataset's features come from ` +
        `episode ${first.label} with ${first.jointNames.length} [${first.jointNames.join(", ")}]; export episodes of one robot model per dataset`,
    );
  }
  const sorted = (names: string[]) => [...names].sort().join(", ");
  if (sorted(episode.cameras) !== sorted(first.cameras)) {
    throw new Error(
      `episode ${episode.label} has cameras [${sorted(episode.cameras)}] but the dataset's features come from ` +
        `episode ${first.label} with cameras [${sorted(first.cameras)}]; export episodes with one camera set per dataset`,
    );
  }
}

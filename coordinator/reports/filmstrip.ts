/**
 * Key frames of failed episodes for a report's filmstrip: for each of at most FILMSTRIP_EPISODES
 * failures (one per failure cluster first, in episode order, then the next failures), the first,
 * middle and last frame of the episode's top camera (`/camera/top` in its MCAP), read where the
 * recording is stored (ranged reads of the indexed MCAP: a few chunks per frame, never the whole
 * file) and scaled down to FRAME_WIDTH_PX wide JPEGs. Bounded whatever the run's size: the choice
 * reads the run's episode rows once, the frames come from at most FILMSTRIP_EPISODES recordings.
 * An episode whose recording is not stored (purged, never uploaded) or has no top camera is skipped.
 */
import { cameraTopic } from "../../protocol/recording/recording-layout.js";
import { cameraJpeg, openRecordingReader } from "../../protocol/recording/recording-reader.js";
import { loadSharp } from "../../protocol/image/load-sharp.js";
import { artifactKey } from "../artifacts/artifact-store.js";
import { policySucceeded } from "../runs/policy-outcome.js";
import type { Db } from "../store/database.js";
import { getArtifact, type ArtifactRow } from "../store/artifacts-repo.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { objectReadable } from "../storage/object-readable.js";
import type { ObjectStore } from "../storage/object-store.js";

export const FILMSTRIP_EPISODES = 4;
export const FRAME_WIDTH_PX = 240;
const CAMERA_TOPIC = cameraTopic("top");

export interface FilmstripFrame {
  /** Seconds from the episode's first top-camera frame. */
  t_s: number;
  jpeg: Uint8Array;
}

export interface FilmstripEpisode {
  /** The episode's index in the run (from 0, as in the API). */
  index: number;
  cluster: string | null;
  cell: string | null;
  frames: FilmstripFrame[];
}

/** A failure chosen for the filmstrip, with its stored recording. */
export interface FilmstripChoice {
  episode: Pick<EpisodeRecord, "id" | "idx" | "failureCluster" | "cellId">;
  mcap: ArtifactRow;
}

/** Which failures the filmstrip shows: one per cluster first, then the next, each with a stored MCAP. */
export async function chooseFilmstrip(db: Db, episodes: readonly EpisodeRecord[], max = FILMSTRIP_EPISODES): Promise<FilmstripChoice[]> {
  const failures = episodes.filter((e) => e.status === "done" && !policySucceeded(e)).sort((a, b) => a.idx - b.idx);
  const seen = new Set<string>();
  const firstOfCluster = failures.filter((e) => {
    const cluster = e.failureCluster ?? "";
    if (seen.has(cluster)) return false;
    seen.add(cluster);
    return true;
  });
  const order = [...firstOfCluster, ...failures.filter((e) => !firstOfCluster.includes(e))];
  const chosen: FilmstripChoice[] = [];
  for (const episode of order) {
    if (chosen.length >= max) break;
    const mcap = await getArtifact(db, episode.id, "mcap");
    if (mcap?.status === "stored") chosen.push({ episode, mcap });
  }
  return chosen.sort((a, b) => a.episode.idx - b.episode.idx);
}

/** Decodes one `/camera/top` message in either recording layout (protocol/recording/recording-reader.ts). */
function jpegOf(messageEncoding: string, data: Uint8Array): Buffer | undefined {
  try {
    const jpeg = cameraJpeg(messageEncoding, data);
    return jpeg.length > 0 ? Buffer.from(jpeg) : undefined;
  } catch {
    return undefined;
  }
}

/** The first, middle and last top-camera frames of one stored recording. */
async function keyFrames(objects: ObjectStore, choice: FilmstripChoice): Promise<FilmstripFrame[]> {
  const key = artifactKey({ runId: choice.mcap.run_id, episodeId: choice.mcap.episode_id, fileName: choice.mcap.file_name });
  const reader = await openRecordingReader(objectReadable(objects, key, choice.mcap.bytes));
  const channel = [...reader.channelsById.values()].find((c) => c.topic === CAMERA_TOPIC);
  if (!channel) return [];
  const first = async (options: { startTime?: bigint; reverse?: boolean }) => {
    for await (const message of reader.readMessages({ topics: [CAMERA_TOPIC], validateCrcs: false, ...options })) return message;
    return undefined;
  };
  const start = await first({});
  const end = await first({ reverse: true });
  if (!start || !end) return [];
  const middle = await first({ startTime: start.logTime + (end.logTime - start.logTime) / 2n });
  const frames: FilmstripFrame[] = [];
  for (const message of [start, middle, end]) {
    if (!message) continue;
    const jpeg = jpegOf(channel.messageEncoding, message.data);
    if (!jpeg) continue;
    const sharp = await loadSharp();
    const small = await sharp(jpeg).resize({ width: FRAME_WIDTH_PX, withoutEnlargement: true }).jpeg({ quality: 80 }).toBuffer();
    frames.push({ t_s: Number(message.logTime - start.logTime) / 1e9, jpeg: new Uint8Array(small) });
  }
  return frames;
}

/** The chosen episodes' key frames; an unreadable recording gives that episode no frames (never a failed report). */
export async function readFilmstrip(objects: ObjectStore, choices: readonly FilmstripChoice[]): Promise<FilmstripEpisode[]> {
  const out: FilmstripEpisode[] = [];
  for (const choice of choices) {
    let frames: FilmstripFrame[] = [];
    try {
      frames = await keyFrames(objects, choice);
    } catch {
      frames = [];
    }
    if (frames.length > 0) out.push({ index: choice.episode.idx, cluster: choice.episode.failureCluster, cell: choice.episode.cellId, frames });
  }
  return out;
}

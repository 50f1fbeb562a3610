/**
 * What survives a crash: a marker file names the episode that was running, and its recording is
 * still `<id>.mcap.part`. On start the recording is renamed `<id>.mcap.interrupted` (readable up to
 * its last chunk, kept on the cell) and the episode is reported interrupted ("agent_restart"),
 * through the outbox, once.
 *
 * The marker is cleared right after EpisodeFinished enters the outbox, so a crash in between
 * leaves a marker for an attempt that did finish: that attempt is not reported interrupted (its
 * EpisodeFinished, pending or acked, is its report); the stale marker is only cleared. Artifacts
 * announced for an EpisodeFinished that never entered the outbox (a crash between the sidecar and
 * the enqueue) are set aside in `rejected/`: no message will ever announce them.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Outbox } from "./link/outbox.js";
import type { ArtifactStore } from "./upload/artifact-store.js";

export interface RunningMarker {
  episode_id: string;
  attempt: number;
  started_at_ms: number;
}

const MARKER = "current-episode.json";

export function writeRunningMarker(dataDir: string, marker: RunningMarker): void {
  const fd = openSync(join(dataDir, MARKER), "w");
  writeSync(fd, JSON.stringify(marker));
  fsyncSync(fd);
  closeSync(fd);
}

export function clearRunningMarker(dataDir: string): void {
  rmSync(join(dataDir, MARKER), { force: true });
}

function readRunningMarker(dataDir: string): RunningMarker | undefined {
  const path = join(dataDir, MARKER);
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as RunningMarker;
  } catch {
    return undefined;
  }
}

/** Renames `<base>` to `<base>` or, if taken, `<base>-2`, `<base>-3`, ... */
export async function renameFree(from: string, to: string): Promise<string> {
  let target = to;
  for (let n = 2; existsSync(target); n++) target = `${to}-${n}`;
  await rename(from, target);
  return target;
}

/**
 * How the attempt in `marker` was already reported finished, if it was: its EpisodeFinished waits
 * in the outbox ("queued"), or was acked ("acked": trimmed from the outbox, but the artifacts it
 * announced, with a seq the outbox did assign, are still queued for upload).
 */
async function finishedReport(marker: RunningMarker, outbox: Outbox, store: ArtifactStore | undefined): Promise<"queued" | "acked" | undefined> {
  const queued = outbox.unacked().some((m) => m.episodeFinished?.episodeId === marker.episode_id && m.episodeFinished.attempt === marker.attempt);
  if (queued) return "queued";
  if (!store) return undefined;
  const announced = (await store.list()).filter((a) => a.ref.episodeId === marker.episode_id && a.announcedSeq <= outbox.lastSeqAcked);
  return announced.length > 0 ? "acked" : undefined;
}

/** Returns the id of the episode a crash interrupted, if any. */
export async function recoverAfterCrash(
  dataDir: string, recordingsDir: string, outbox: Outbox, log: (line: string) => void, store?: ArtifactStore,
): Promise<string | undefined> {
  for (const name of await readdir(recordingsDir)) {
    if (name.endsWith(".mcap.part")) {
      const kept = await renameFree(join(recordingsDir, name), join(recordingsDir, name.replace(/\.part$/, ".interrupted")));
      log(`kept the recording of an episode interrupted by a crash as ${kept}`);
    } else if (name.endsWith(".mp4.part")) {
      await rm(join(recordingsDir, name), { force: true });
    }
  }
  if (store) {
    for (const artifact of await store.list()) {
      if (artifact.announcedSeq < outbox.nextSeqToAssign) continue;
      const kept = await store.setAside(artifact, `never_announced: the agent stopped before the EpisodeFinished (seq ${artifact.announcedSeq}) listing it was queued`);
      log(`${artifact.ref.fileName} (episode ${artifact.ref.episodeId}) was never reported to the coordinator, so it cannot be uploaded; moved, not deleted, to ${kept}`);
    }
  }
  const marker = readRunningMarker(dataDir);
  if (!marker) return undefined;
  const finished = await finishedReport(marker, outbox, store);
  if (finished) {
    clearRunningMarker(dataDir);
    log(`episode ${marker.episode_id} (attempt ${marker.attempt}) had finished before the agent stopped and its report is ${finished === "queued" ? "queued for" : "already applied by"} the coordinator; not reporting it interrupted`);
    return undefined;
  }
  const alreadyQueued = outbox.unacked().some((m) => m.episodeInterrupted?.episodeId === marker.episode_id && m.episodeInterrupted.attempt === marker.attempt);
  if (!alreadyQueued) {
    outbox.enqueue({
      episodeInterrupted: {
        episodeId: marker.episode_id, attempt: marker.attempt, reason: "agent_restart",
        detail: "the cell agent restarted while the episode was running", durationS: 0, artifacts: [],
      },
    });
  }
  clearRunningMarker(dataDir);
  log(`episode ${marker.episode_id} (attempt ${marker.attempt}) was interrupted by an agent restart; reported to the coordinator`);
  return marker.episode_id;
}

/**
 * What survives a crash: a marker file names the episode that was running, and its recording is
 * still `<id>.mcap.part`. On start the recording is renamed `<id>.mcap.interrupted` (readable up to
 * its last chunk, kept on the cell) and the episode is reported interrupted ("agent_restart"),
 * through the outbox, once.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Outbox } from "./link/outbox.js";

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
async function renameFree(from: string, to: string): Promise<string> {
  let target = to;
  for (let n = 2; existsSync(target); n++) target = `${to}-${n}`;
  await rename(from, target);
  return target;
}

/** Returns the id of the episode a crash interrupted, if any. */
export async function recoverAfterCrash(dataDir: string, recordingsDir: string, outbox: Outbox, log: (line: string) => void): Promise<string | undefined> {
  for (const name of await readdir(recordingsDir)) {
    if (name.endsWith(".mcap.part")) {
      const kept = await renameFree(join(recordingsDir, name), join(recordingsDir, name.replace(/\.part$/, ".interrupted")));
      log(`kept the recording of an episode interrupted by a crash as ${kept}`);
    } else if (name.endsWith(".mp4.part")) {
      await rm(join(recordingsDir, name), { force: true });
    }
  }
  const marker = readRunningMarker(dataDir);
  if (!marker) return undefined;
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

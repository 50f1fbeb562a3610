/**
 * The dataset worker thread (started by coordinator/exports/dataset-writer.ts through
 * dataset-worker-entry.mjs): writes the training datasets it is asked for, several at once as the
 * archive worker's concurrency allows, and answers each with its archive members or the error; and
 * calibration exports' episode records, answered with their bytes.
 * Progress goes back after every episode; an abort makes the writer's next progress report throw,
 * which stops it the way a throwing progress callback always has (its ffmpeg children killed).
 */
import { parentPort } from "node:worker_threads";
import { calibrationEpisode } from "./calibration-episode.js";
import { writeTrainingDataset } from "./format-writers.js";
import type { DatasetJob, DatasetWorkerAnswer, DatasetWorkerMessage } from "./dataset-writer.js";
import type { ExportEpisode } from "./export-input.js";

const port = parentPort;
if (!port) throw new Error("coordinator/exports/dataset-worker.ts runs as a worker thread (coordinator/exports/dataset-writer.ts starts it)");

/** Why each job was aborted, by id (absent: not aborted). */
const aborted = new Map<number, string>();
/** Jobs whose episodes are still arriving (the head and the pages so far). */
const arriving = new Map<number, { job: DatasetJob; episodes: ExportEpisode[] }>();
const running = new Set<number>();
const post = (answer: DatasetWorkerAnswer, transfer: ArrayBuffer[] = []) => port.postMessage(answer, transfer);

port.on("message", (message: DatasetWorkerMessage) => {
  if (message.type === "calibration") {
    void calibrationRecord(message.id, message.runId, message.episode, message.scenarioId);
    return;
  }
  if (message.type === "abort") {
    if (running.has(message.id)) aborted.set(message.id, message.reason);
    else if (arriving.delete(message.id)) post({ type: "failed", id: message.id, message: message.reason });
    return;
  }
  const job = message.type === "write" ? { job: message, episodes: [] } : arriving.get(message.id);
  if (!job) return;
  if (message.type === "episodes") job.episodes.push(...message.episodes);
  if (job.episodes.length < job.job.episodes) {
    arriving.set(job.job.id, job);
    return;
  }
  arriving.delete(job.job.id);
  void write(job.job, job.episodes);
});

/** Posts why a job failed: the message, and the stack for the coordinator's log. */
function failed(id: number, error: unknown): void {
  post({ type: "failed", id, message: error instanceof Error ? error.message : String(error), ...(error instanceof Error && error.stack ? { stack: error.stack } : {}) });
}

async function calibrationRecord(id: number, runId: string, episode: ExportEpisode, scenarioId: number | null): Promise<void> {
  try {
    const data = new TextEncoder().encode(`${JSON.stringify(await calibrationEpisode(runId, episode, scenarioId))}\n`);
    post({ type: "record", id, data }, [data.buffer as ArrayBuffer]);
  } catch (error) {
    failed(id, error);
  }
}

async function write(job: DatasetJob, episodes: ExportEpisode[]): Promise<void> {
  running.add(job.id);
  try {
    const entries = await writeTrainingDataset(job.format, job.run, episodes, job.workDir, (done) => {
      const reason = aborted.get(job.id);
      if (reason !== undefined) throw new Error(reason);
      post({ type: "progress", id: job.id, done });
    });
    post({ type: "done", id: job.id, entries });
  } catch (error) {
    failed(job.id, error);
  } finally {
    running.delete(job.id);
    aborted.delete(job.id);
  }
}

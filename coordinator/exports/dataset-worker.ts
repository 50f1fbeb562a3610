/**
 * The dataset worker thread (started by coordinator/exports/dataset-writer.ts through
 * dataset-worker-entry.mjs): writes the training datasets it is asked for, several at once as the
 * archive worker's concurrency allows, and answers each with its archive members or the error.
 * Progress goes back after every episode; an abort makes the writer's next progress report throw,
 * which stops it the way a throwing progress callback always has (its ffmpeg children killed).
 */
import { parentPort } from "node:worker_threads";
import { writeTrainingDataset } from "./format-writers.js";
import type { DatasetJob, DatasetWorkerAnswer, DatasetWorkerMessage } from "./dataset-writer.js";

const port = parentPort;
if (!port) throw new Error("coordinator/exports/dataset-worker.ts runs as a worker thread (coordinator/exports/dataset-writer.ts starts it)");

/** Why each running job was aborted, by id (absent: not aborted). */
const aborted = new Map<number, string>();
const running = new Set<number>();

port.on("message", (message: DatasetWorkerMessage) => {
  if (message.type === "abort") {
    if (running.has(message.id)) aborted.set(message.id, message.reason);
    return;
  }
  void write(message);
});

async function write(job: DatasetJob): Promise<void> {
  running.add(job.id);
  const post = (answer: DatasetWorkerAnswer) => port!.postMessage(answer);
  try {
    const entries = await writeTrainingDataset(job.format, job.run, job.episodes, job.workDir, (done) => {
      const reason = aborted.get(job.id);
      if (reason !== undefined) throw new Error(reason);
      post({ type: "progress", id: job.id, done });
    });
    post({ type: "done", id: job.id, entries });
  } catch (error) {
    post({ type: "failed", id: job.id, message: error instanceof Error ? error.message : String(error), ...(error instanceof Error && error.stack ? { stack: error.stack } : {}) });
  } finally {
    running.delete(job.id);
    aborted.delete(job.id);
  }
}

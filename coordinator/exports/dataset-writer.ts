/**
 * Where the training datasets of run exports (LeRobot, RLDS) and the episode records of calibration
 * exports are written: on one worker thread (`workerDatasetWriter`), never on the event loop that
 * answers the API, the fleet and every cell link. A dataset is CPU work in long synchronous stretches: decompressing a recording's chunks,
 * grouping its steps, encoding Parquet row groups and footers, counting pixel levels; on the main
 * loop a LeRobot export of 100 README episodes held it up to 65-134 ms at a time
 * (`npm run bench -- export`, `lerobot_loop_delay_max_ms`), past the few milliseconds anything the
 * coordinator does may hold it. The archive around it (reading the files, SHA-256, the store's
 * `put`) stays on the main loop: it is streamed and yields between chunks.
 *
 * The worker starts on the first dataset and again after a crash (the jobs it held fail; the
 * archive worker marks them failed, as any writer error). Several jobs run on it at once, as the
 * archive worker's concurrency allows. A job stops when its progress callback throws or its signal
 * aborts: the worker's writer throws at its next progress report (killing its ffmpeg children), and
 * the job settles only once the writer has stopped, so the caller may remove its folder then.
 */
import { Worker } from "node:worker_threads";
import { nextTurn } from "../async/next-turn.js";
import type { ExportEpisode, ExportProgress, ExportRun } from "./export-input.js";
import type { DatasetEntry, TrainingFormat } from "./format-writers.js";

/**
 * A job as the worker receives it (coordinator/exports/dataset-worker.ts): its head, then its episodes
 * in pages of EPISODES_PER_MESSAGE, one page a turn (posting copies a message on the spot: a 10,000-episode
 * run's list at once held the loop 27-75 ms), and the worker starts once it has `episodes` of them.
 */
export type DatasetJob = { type: "write"; id: number; format: TrainingFormat; run: ExportRun; episodes: number; workDir: string };
export type DatasetWorkerMessage =
  | DatasetJob
  | { type: "episodes"; id: number; episodes: ExportEpisode[] }
  | { type: "abort"; id: number; reason: string }
  | { type: "calibration"; id: number; runId: string; episode: ExportEpisode; scenarioId: number | null };

/** Episodes per message to the worker: about 2 ms of copying each. */
export const EPISODES_PER_MESSAGE = 250;
/** What the worker posts back: progress after each episode, then the archive's members or why it failed. */
export type DatasetWorkerAnswer =
  | { type: "progress"; id: number; done: number }
  | { type: "done"; id: number; entries: DatasetEntry[] }
  | { type: "record"; id: number; data: Uint8Array }
  | { type: "failed"; id: number; message: string; stack?: string };

export interface DatasetWriter {
  /**
   * Writes `format`'s dataset of `episodes` under `workDir` and answers the archive's members.
   * `onProgress` is called with the episodes written so far; when it throws, or `signal` aborts, the
   * writer stops and this rejects with that error once it has.
   */
  write(format: TrainingFormat, run: ExportRun, episodes: ExportEpisode[], workDir: string, onProgress: ExportProgress, signal?: AbortSignal): Promise<DatasetEntry[]>;
  /**
   * A calibration export's record of one episode (calibration-episode.ts), as the archive holds it:
   * its JSON and a newline. Reading the recording and deriving its ground truth took 70-100 ms of CPU
   * an episode on the main loop.
   */
  calibrationRecord(runId: string, episode: ExportEpisode, scenarioId: number | null): Promise<Uint8Array>;
  /** Stops the worker, if any; jobs still running fail. */
  close(): Promise<void>;
}

interface Pending {
  /** With the job's answer: a dataset's entries (`write`), or a calibration record's bytes (`calibrationRecord`). */
  resolve: (value: DatasetEntry[] | Uint8Array) => void;
  reject: (error: Error) => void;
  onProgress?: ExportProgress;
  /** Why the job was stopped (a throw of onProgress, an abort): what it rejects with. */
  stopped?: unknown;
}

/** Writes datasets on a worker thread, started on first use. */
export function workerDatasetWriter(): DatasetWriter {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const failAll = (error: Error) => {
    for (const job of pending.values()) job.reject(error);
    pending.clear();
  };
  const stop = (id: number, reason: unknown) => {
    const job = pending.get(id);
    if (!job || job.stopped !== undefined) return;
    job.stopped = reason ?? new Error("the export was stopped");
    const message = job.stopped instanceof Error ? job.stopped.message : String(job.stopped);
    worker?.postMessage({ type: "abort", id, reason: message } satisfies DatasetWorkerMessage);
  };
  const start = (): Worker => {
    const started = new Worker(new URL("./dataset-worker-entry.mjs", import.meta.url));
    // An idle worker does not keep the process alive.
    started.unref();
    started.on("message", (answer: DatasetWorkerAnswer) => {
      const job = pending.get(answer.id);
      if (!job) return;
      if (answer.type === "progress") {
        if (job.stopped !== undefined) return;
        try {
          job.onProgress?.(answer.done);
        } catch (error) {
          stop(answer.id, error);
        }
        return;
      }
      pending.delete(answer.id);
      if (job.stopped !== undefined) job.reject(job.stopped as Error);
      else if (answer.type === "done") job.resolve(answer.entries);
      else if (answer.type === "record") job.resolve(answer.data);
      else job.reject(Object.assign(new Error(answer.message), answer.stack ? { stack: answer.stack } : {}));
    });
    // A worker that `close()` stopped fails its jobs there; one that died on its own, here.
    started.on("error", (error) => {
      if (worker !== started) return;
      worker = undefined;
      failAll(new Error(`the coordinator's dataset worker crashed (${error.message}) while writing this export; request the export again`));
    });
    started.on("exit", (code) => {
      if (worker !== started) return;
      worker = undefined;
      failAll(new Error(`the coordinator's dataset worker stopped (exit code ${code}) while writing this export; request the export again`));
    });
    return started;
  };

  return {
    async write(format, run, episodes, workDir, onProgress, signal) {
      signal?.throwIfAborted();
      const target = (worker ??= start());
      const id = nextId++;
      const done = new Promise<DatasetEntry[]>((resolve, reject) => pending.set(id, { resolve: resolve as Pending["resolve"], reject, onProgress }));
      const onAbort = () => stop(id, signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        target.postMessage({ type: "write", id, format, run, episodes: episodes.length, workDir } satisfies DatasetWorkerMessage);
        for (let from = 0; from < episodes.length && pending.has(id); from += EPISODES_PER_MESSAGE) {
          if (from > 0) await nextTurn();
          target.postMessage({ type: "episodes", id, episodes: episodes.slice(from, from + EPISODES_PER_MESSAGE) } satisfies DatasetWorkerMessage);
        }
        return await done;
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    },
    calibrationRecord(runId, episode, scenarioId) {
      const target = (worker ??= start());
      const id = nextId++;
      const done = new Promise<Uint8Array>((resolve, reject) => pending.set(id, { resolve: resolve as Pending["resolve"], reject }));
      target.postMessage({ type: "calibration", id, runId, episode, scenarioId } satisfies DatasetWorkerMessage);
      return done;
    },
    async close() {
      const closing = worker;
      worker = undefined;
      await closing?.terminate();
      failAll(new Error("the dataset worker was stopped (the coordinator is shutting down)"));
    },
  };
}

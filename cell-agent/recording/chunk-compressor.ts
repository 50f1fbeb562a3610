/**
 * zstd compression of recording chunks on a worker thread, so the episode's control loop never waits
 * for it: compressing a 1 MiB chunk takes the WebAssembly zstd several milliseconds to tens of
 * milliseconds on a loaded cell PC, a large part of a 33 ms control period. The recorder hands each
 * closed chunk over (transferred, not copied) and keeps filling the next one while the worker
 * compresses; chunks come back in the order they were sent, also transferred.
 *
 * The worker's source is plain JavaScript evaluated by Node (a worker does not get the tsx loader
 * the agent runs under); it loads the same @foxglove/wasm-zstd and level as
 * protocol/recording/mcap-compression.ts. It is unref'd: a recorder that is never finished does not
 * keep the process alive.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { CHUNK_COMPRESSION, ZSTD_LEVEL } from "../../protocol/recording/mcap-compression.js";

export interface ChunkCompressor {
  /** Compresses `records` (which it takes over: the caller must not touch them again). */
  compress(records: Uint8Array): Promise<{ compression: string; compressedData: Uint8Array }>;
  /** Stops the worker (after the chunks sent so far are answered or failed). */
  close(): Promise<void>;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { compress, isLoaded } = require(workerData.zstdPath);
parentPort.on("message", async ({ id, records }) => {
  try {
    await isLoaded;
    const compressed = compress(new Uint8Array(records), workerData.level);
    // Sent back transferred (wasm-zstd answers with a Buffer of its own ArrayBuffer at chunk sizes), not cloned.
    const whole = compressed.byteOffset === 0 && compressed.byteLength === compressed.buffer.byteLength;
    parentPort.postMessage({ id, compressed }, whole ? [compressed.buffer] : []);
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

/**
 * Starts the worker now (loading zstd's WebAssembly takes a worker from a few hundred milliseconds to
 * a second on a loaded 2-core cell PC), so an agent starts one compressor and hands it to every
 * episode's recorder instead of paying that at each episode's start. A worker that fails or exits
 * fails the chunks it held; the next chunk starts a new one.
 */
export function startChunkCompressor(): ChunkCompressor {
  const waiting = new Map<number, { resolve: (data: Uint8Array) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let worker: Worker | undefined;
  let closed = false;
  const spawn = (): Worker => {
    const started = new Worker(WORKER_SOURCE, {
      eval: true, workerData: { zstdPath: createRequire(import.meta.url).resolve("@foxglove/wasm-zstd"), level: ZSTD_LEVEL },
    });
    started.unref();
    const failAll = (error: Error) => {
      if (worker === started) worker = undefined;
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
    };
    started.on("message", (message: { id: number; compressed?: Uint8Array; error?: string }) => {
      const entry = waiting.get(message.id);
      waiting.delete(message.id);
      if (!entry) return;
      if (message.compressed) entry.resolve(message.compressed);
      else entry.reject(new Error(`compressing a recording chunk failed: ${message.error}`));
    });
    started.on("error", (error) => failAll(new Error(`the recording's compression worker failed: ${error.message}`)));
    started.on("exit", (code) => failAll(new Error(`the recording's compression worker exited (code ${code})`)));
    return started;
  };
  worker = spawn();
  return {
    compress(records) {
      if (closed) return Promise.reject(new Error("the recording's compression worker was closed"));
      worker ??= spawn();
      const id = nextId++;
      const done = new Promise<Uint8Array>((resolve, reject) => waiting.set(id, { resolve, reject }));
      // A whole ArrayBuffer is transferred; a view into a larger one is copied out first.
      const own = records.byteOffset === 0 && records.byteLength === records.buffer.byteLength ? records : records.slice();
      worker.postMessage({ id, records: own.buffer }, [own.buffer as ArrayBuffer]);
      return done.then((compressedData) => ({ compression: CHUNK_COMPRESSION, compressedData }));
    },
    async close() {
      closed = true;
      await worker?.terminate();
    },
  };
}

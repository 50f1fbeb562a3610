/**
 * zstd compression of recording chunks on a worker thread, so the episode's control loop never waits
 * for it: compressing a 1 MiB chunk takes the WebAssembly zstd several milliseconds to tens of
 * milliseconds on a loaded cell PC, a large part of a 33 ms control period. The recorder hands each
 * closed chunk over (transferred, not copied) and keeps filling the next one while the worker
 * compresses; chunks come back in the order they were sent, also transferred, and so does the chunk's
 * buffer (zstd copies its input into WebAssembly memory), which the writer fills again. The worker
 * also computes the chunk's two CRC-32s (of the records and of the compressed bytes; @node-rs/crc32),
 * which the writer would otherwise compute on the agent's main thread.
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
  /**
   * Compresses `records`, a view from offset 0 of a buffer it takes over whole (the caller must not
   * touch it again), and hands the buffer back as `records`, with the CRC-32 of the records and of
   * the compressed bytes.
   */
  compress(records: Uint8Array): Promise<{ compression: string; compressedData: Uint8Array; records: ArrayBuffer; uncompressedCrc: number; compressedCrc: number }>;
  /** Stops the worker (after the chunks sent so far are answered or failed). */
  close(): Promise<void>;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { compress, isLoaded } = require(workerData.zstdPath);
const { crc32 } = require(workerData.crc32Path);
parentPort.on("message", async ({ id, records, length }) => {
  try {
    await isLoaded;
    const view = new Uint8Array(records, 0, length);
    const uncompressedCrc = crc32(view);
    const compressed = compress(view, workerData.level);
    const compressedCrc = crc32(compressed);
    // Sent back transferred (wasm-zstd answers with a Buffer of its own ArrayBuffer at chunk sizes), not cloned,
    // with the records' buffer for the next chunks.
    const whole = compressed.byteOffset === 0 && compressed.byteLength === compressed.buffer.byteLength;
    parentPort.postMessage({ id, compressed, records, uncompressedCrc, compressedCrc }, whole ? [compressed.buffer, records] : [records]);
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
  const resolve = (name: string) => createRequire(import.meta.url).resolve(name);
  type Done = { compressed: Uint8Array; records: ArrayBuffer; uncompressedCrc: number; compressedCrc: number };
  const waiting = new Map<number, { resolve: (done: Done) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let worker: Worker | undefined;
  let closed = false;
  const spawn = (): Worker => {
    const started = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { zstdPath: resolve("@foxglove/wasm-zstd"), crc32Path: resolve("@node-rs/crc32"), level: ZSTD_LEVEL },
    });
    started.unref();
    const failAll = (error: Error) => {
      if (worker === started) worker = undefined;
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
    };
    started.on("message", (message: Partial<Done> & { id: number; error?: string }) => {
      const entry = waiting.get(message.id);
      waiting.delete(message.id);
      if (!entry) return;
      const { compressed, records, uncompressedCrc, compressedCrc } = message;
      if (compressed && records && uncompressedCrc !== undefined && compressedCrc !== undefined) entry.resolve({ compressed, records, uncompressedCrc, compressedCrc });
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
      const done = new Promise<Done>((resolve, reject) => waiting.set(id, { resolve, reject }));
      // The whole buffer is transferred; a view that does not start it is copied out first.
      const own = records.byteOffset === 0 ? records : records.slice();
      worker.postMessage({ id, records: own.buffer, length: own.byteLength }, [own.buffer as ArrayBuffer]);
      return done.then(({ compressed, ...rest }) => ({ compression: CHUNK_COMPRESSION, compressedData: compressed, ...rest }));
    },
    async close() {
      closed = true;
      await worker?.terminate();
    },
  };
}

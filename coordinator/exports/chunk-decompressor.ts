/**
 * Decompression of a recording's chunks for an export, into buffers the export reuses from episode to
 * episode instead of a fresh one per chunk.
 *
 * The chunks are zstd (protocol/recording/mcap-compression.ts). @foxglove/wasm-zstd's `decompress`
 * returns every chunk in a new 1 MiB buffer: for a 100-episode export 400 MB of buffers outside V8's
 * heap, and that much external memory starts a major garbage collection every couple of episodes
 * (in a profile of the RLDS export, collections were a fifth of its CPU). Here the same zstd build
 * (the package's own WebAssembly module, loaded once per decompressor) decompresses into its heap and
 * the records are copied into a buffer of this decompressor's pool; `recycle()` hands the pool out
 * again from the start. Measured on a README episode's chunks, best of 7 (CPU): 3.8 ms an episode
 * against 4.0-6.1 ms through `decompress` (whose fresh output buffer is most of the difference).
 *
 * Native zstd was measured too, and is not faster in Node: @toondepauw/node-zstd's `decodeSync` 4.6-5.7
 * ms and @mongodb-js/zstd 1.2 4.3-5.8 ms an episode (both return a new buffer per chunk, as Node 22's
 * `zlib.zstdDecompressSync` does), against 2.2 GB/s (1.8 ms an episode) for the zstd CLI into one
 * reused buffer: the allocation, not the decoder, is the cost, and no package installable from npm
 * alone decompresses into a buffer it is given. So no native module: the WebAssembly one runs everywhere.
 * Measured again with @mongodb-js/zstd 1.2.2 (its prebuilt linux-x64 binary, async on its own threads):
 * 100 passes over a README episode's four chunks in a fresh process, as an export reads them, took
 * 0.70-0.77 s of CPU against 0.60-0.73 s here (three alternations); warm, on 41 chunks, 930-980 MB/s
 * against 840 MB/s, before the fresh buffers' garbage collections. (Its compression ignores the level
 * it is given and runs at 140-210 MB/s, slower than the cell's WebAssembly level 2.)
 *
 * The bound on a chunk's stated uncompressed size is the readers' (mcap-compression.ts): it is checked
 * before anything is allocated, and zstd never writes past the `uncompressedSize` bytes it is given.
 */
import { createRequire } from "node:module";
import { MAX_UNCOMPRESSED_CHUNK_BYTES } from "../../protocol/recording/mcap-compression.js";

/** The parts of the Emscripten module inside @foxglove/wasm-zstd used here (its dist/wasm-zstd.js). */
interface ZstdModule {
  ready: Promise<unknown>;
  /** The WebAssembly memory; replaced when the heap grows, so read it after every `_malloc`. */
  HEAPU8: Uint8Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  /** ZSTD_decompress: the bytes written, or -1 on an error (a damaged frame, or more than `capacity` bytes). */
  _decompress(destination: number, capacity: number, source: number, sourceBytes: number): number;
}

/** A pool buffer is at least this big (an Assay cell writes 1 MiB chunks), so most are never replaced. */
const MIN_POOL_BUFFER_BYTES = 1024 * 1024;

export class ChunkDecompressor {
  /** Output buffers, handed out in order from `next`. */
  private readonly pool: Buffer[] = [];
  private next = 0;
  /** Scratch space in the WebAssembly heap: compressed input and decompressed output. */
  private source = { pointer: 0, bytes: 0 };
  private destination = { pointer: 0, bytes: 0 };

  private constructor(private readonly zstd: ZstdModule) {}

  /** Loads (instantiates) the WebAssembly zstd module: once per export, not per episode. */
  static async create(): Promise<ChunkDecompressor> {
    const factory = createRequire(import.meta.url)("@foxglove/wasm-zstd/dist/wasm-zstd.js") as () => Promise<ZstdModule>;
    const zstd = await factory();
    await zstd.ready;
    return new ChunkDecompressor(zstd);
  }

  /**
   * The chunk's records, decompressed (or copied, for an uncompressed chunk) into a pool buffer: valid
   * until `recycle()`.
   * @throws Error for a compression an Assay recording never has, a size over the readers' bound, or a
   *   damaged frame (one that does not decompress to exactly `uncompressedSize` bytes)
   */
  records(compression: string, stored: Uint8Array, uncompressedSize: bigint, where: string): Uint8Array {
    if (compression === "") {
      const copy = this.take(stored.byteLength);
      copy.set(stored);
      return copy;
    }
    if (compression !== "zstd") throw new Error(`${where} is compressed with ${JSON.stringify(compression)}, which an Assay recording never is`);
    if (uncompressedSize > BigInt(MAX_UNCOMPRESSED_CHUNK_BYTES)) {
      throw new Error(`MCAP chunk claims ${uncompressedSize} bytes uncompressed, over the ${MAX_UNCOMPRESSED_CHUNK_BYTES}-byte limit of a recorded chunk; the recording is damaged or was not written by an Assay cell`);
    }
    const size = Number(uncompressedSize);
    const source = this.scratch(this.source, stored.byteLength);
    const destination = this.scratch(this.destination, size);
    this.zstd.HEAPU8.set(stored, source);
    const written = this.zstd._decompress(destination, size, source, stored.byteLength);
    if (written !== size) throw new Error(`${where} does not decompress to the ${size} bytes its header states (zstd ${written === -1 ? "failed" : `gave ${written}`}); the recording is damaged`);
    const out = this.take(size);
    out.set(this.zstd.HEAPU8.subarray(destination, destination + size));
    return out;
  }

  /** Every buffer handed out so far may be written again: call once nothing holds the records read before. */
  recycle(): void {
    this.next = 0;
  }

  /** The next pool buffer, `size` bytes long (grown when it is smaller). */
  private take(size: number): Buffer {
    let buffer = this.pool[this.next];
    if (!buffer || buffer.byteLength < size) {
      buffer = Buffer.allocUnsafe(Math.max(size, MIN_POOL_BUFFER_BYTES));
      this.pool[this.next] = buffer;
    }
    this.next += 1;
    return buffer.subarray(0, size);
  }

  /** A region of at least `bytes` in the WebAssembly heap, grown (reallocated) when smaller. */
  private scratch(region: { pointer: number; bytes: number }, bytes: number): number {
    if (region.bytes < bytes) {
      if (region.pointer !== 0) this.zstd._free(region.pointer);
      region.pointer = this.zstd._malloc(bytes);
      if (region.pointer === 0) throw new Error(`zstd: the WebAssembly heap has no room for ${bytes} bytes`);
      region.bytes = bytes;
    }
    return region.pointer;
  }
}

/**
 * Chunk compression of episode recordings: zstd, one of the two compressions the MCAP specification
 * names ("lz4", "zstd"), which Foxglove Studio, the MCAP CLI and every MCAP library read. Done with
 * @foxglove/wasm-zstd (zstd compiled to WebAssembly, inside the npm package: nothing to build or
 * download; Node 20's zlib has no zstd), the library Foxglove's own readers decompress with.
 *
 * The WebAssembly module loads asynchronously once per process: `loadMcapCompression()` awaits it and
 * returns the writer's and the readers' hooks. Files recorded before compression (uncompressed
 * chunks) need no handler and read as before.
 */
import { compress, decompress, isLoaded } from "@foxglove/wasm-zstd";

export const CHUNK_COMPRESSION = "zstd";
/**
 * zstd level 2, chosen by measurement on a README episode's four 1 MiB chunks (wasm-zstd, best of 5,
 * CPU time): level 3 (zstd's default) 155 MB/s to 0.532 of the chunks' bytes, level 2 312 MB/s to
 * 0.547, level 1 387 MB/s to 0.625, negative levels 0.67-0.69. Level 2 halves the cell's compression
 * CPU for 3% more bytes; the episode stays about 0.41 of the layout before compression (the bound is
 * 0.5). Most of the gain is in the camera frames, whose JPEGs repeat their headers and much of the
 * scene from frame to frame.
 */
export const ZSTD_LEVEL = 2;

export interface McapCompression {
  /** For McapWriter's `compressChunk`. */
  compressChunk(chunkData: Uint8Array): { compression: string; compressedData: Uint8Array };
  /** For McapIndexedReader's `decompressHandlers`. */
  decompressHandlers: { [compression: string]: (buffer: Uint8Array, decompressedSize: bigint) => Uint8Array };
}

/**
 * The largest uncompressed chunk a reader accepts. The agent writes 1 MiB chunks; a chunk's header
 * states its uncompressed size and the decompressor allocates that much up front, so a damaged or
 * hostile recording claiming gigabytes would take the coordinator's memory without this bound.
 */
export const MAX_UNCOMPRESSED_CHUNK_BYTES = 64 * 1024 * 1024;

function decompressChunk(buffer: Uint8Array, decompressedSize: bigint): Uint8Array {
  if (decompressedSize > BigInt(MAX_UNCOMPRESSED_CHUNK_BYTES)) {
    throw new Error(`MCAP chunk claims ${decompressedSize} bytes uncompressed, over the ${MAX_UNCOMPRESSED_CHUNK_BYTES}-byte limit of a recorded chunk; the recording is damaged or was not written by an Assay cell`);
  }
  return decompress(buffer, Number(decompressedSize));
}

const hooks: McapCompression = {
  compressChunk: (chunkData) => ({ compression: CHUNK_COMPRESSION, compressedData: compress(chunkData, ZSTD_LEVEL) }),
  decompressHandlers: { [CHUNK_COMPRESSION]: decompressChunk },
};

/** The compression hooks, once the WebAssembly module is ready. */
export async function loadMcapCompression(): Promise<McapCompression> {
  await isLoaded;
  return hooks;
}

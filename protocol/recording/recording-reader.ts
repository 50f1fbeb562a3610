/**
 * What every reader of an episode recording shares, so all of them take both layouts: today's (zstd
 * chunks, camera frames as protobuf `foxglove.CompressedImage`, `/tf`, `/robot_description`) and the
 * one before it (uncompressed chunks, camera frames as JSON `foxglove.CompressedImage` with the JPEG
 * in base64). Which one a camera channel uses is its message encoding, so a reader never guesses.
 */
import { crc32 } from "node:zlib";
import { McapIndexedReader, type IReadable } from "@mcap/core";
import { compressedImageData } from "./foxglove-protobuf.js";
import { loadMcapCompression } from "./mcap-compression.js";
import { MessageEncoding } from "./recording-layout.js";

/** Decompressed chunks one reader keeps, in bytes: more than a recorded episode's (about 5 MB). */
const CHUNK_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * An episode MCAP opened for random access, compressed chunks included. Readers pass over a
 * recording several times (its metadata and events, then its steps), and @mcap/core decompresses a
 * chunk again on every pass: this reader keeps what it decompressed (up to CHUNK_CACHE_BYTES, oldest
 * dropped first), keyed by the compressed bytes' size and CRC-32, so each chunk is decompressed once.
 */
export async function openRecordingReader(readable: IReadable): Promise<McapIndexedReader> {
  const { decompressHandlers } = await loadMcapCompression();
  const cache = new Map<string, Uint8Array>();
  let cachedBytes = 0;
  const cached = Object.fromEntries(Object.entries(decompressHandlers).map(([compression, decompress]) => [compression, (buffer: Uint8Array, size: bigint) => {
    const key = `${compression}:${size}:${buffer.byteLength}:${crc32(buffer)}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const data = decompress(buffer, size);
    cache.set(key, data);
    cachedBytes += data.byteLength;
    for (const [oldest, bytes] of cache) {
      if (cachedBytes <= CHUNK_CACHE_BYTES) break;
      cache.delete(oldest);
      cachedBytes -= bytes.byteLength;
    }
    return data;
  }]));
  return McapIndexedReader.Initialize({ readable, decompressHandlers: cached });
}

/** The JPEG of a recorded camera message, by its channel's message encoding ("protobuf" or "json"). */
export function cameraJpeg(messageEncoding: string, data: Uint8Array): Uint8Array {
  if (messageEncoding === MessageEncoding.protobuf) return compressedImageData(data);
  const body = JSON.parse(new TextDecoder().decode(data)) as { data?: unknown };
  return Buffer.from(String(body.data ?? ""), "base64");
}

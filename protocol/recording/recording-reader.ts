/**
 * What every reader of an episode recording shares, so all of them take both layouts: today's (zstd
 * chunks, camera frames as protobuf `foxglove.CompressedImage`, `/tf`, `/robot_description`) and the
 * one before it (uncompressed chunks, camera frames as JSON `foxglove.CompressedImage` with the JPEG
 * in base64). Which one a camera channel uses is its message encoding, so a reader never guesses.
 */
import { McapIndexedReader, type IReadable } from "@mcap/core";
import { decodeCompressedImage } from "./foxglove-protobuf.js";
import { loadMcapCompression } from "./mcap-compression.js";

/** An episode MCAP opened for random access, compressed chunks included. */
export async function openRecordingReader(readable: IReadable): Promise<McapIndexedReader> {
  const { decompressHandlers } = await loadMcapCompression();
  return McapIndexedReader.Initialize({ readable, decompressHandlers });
}

/** The JPEG of a recorded camera message, by its channel's message encoding ("protobuf" or "json"). */
export function cameraJpeg(messageEncoding: string, data: Uint8Array): Uint8Array {
  if (messageEncoding === "protobuf") return decodeCompressedImage(data).data;
  const body = JSON.parse(new TextDecoder().decode(data)) as { data?: unknown };
  return Buffer.from(String(body.data ?? ""), "base64");
}

/**
 * An entry bundled by test/unit/compiled-entry.spec.ts: default and named imports of CommonJS
 * packages (the bundle requires them) and of an ES-only one (the bundle imports it), as production
 * code writes them.
 */
import { Metadata } from "@grpc/grpc-js";
import jpeg from "jpeg-js";
import { Decoder } from "@msgpack/msgpack";
import { crc32 } from "@node-rs/crc32";

/** What each import gave, as the spec checks it. */
export async function probe(): Promise<{ metadata: boolean; jpegEncode: boolean; msgpack: boolean; crc: number; roslibRos: boolean }> {
  const roslib = (await import("roslib")) as unknown as { Ros?: unknown };
  return {
    metadata: typeof new Metadata().set === "function",
    jpegEncode: typeof jpeg.encode === "function",
    msgpack: typeof new Decoder().decode === "function",
    crc: crc32("assay"),
    roslibRos: typeof roslib.Ros === "function",
  };
}

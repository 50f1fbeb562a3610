/**
 * sharp (libvips), loaded where an image is first resized, encoded or rendered rather than with the
 * process: loading its native library costs about 0.1 s of CPU, and most processes that can use it
 * (a simulated cell, whose cameras encode with libjpeg-turbo; a coordinator before its first
 * thumbnail or report) never do or do much later. Node's module cache makes later calls cheap.
 */
import type SharpDefault from "sharp";
import { loadPackage } from "../load-package.js";

export type Sharp = typeof SharpDefault;

/** sharp's function; rejects with a plain message when the library cannot be loaded. */
export async function loadSharp(): Promise<Sharp> {
  return (await loadPackage(() => import("sharp"), "the image library sharp")).default;
}

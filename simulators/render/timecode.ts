/**
 * A burnt-in timecode, as broadcast and machine-vision cameras can overlay one: the wall-clock
 * millisecond a frame was captured, drawn as a barcode along the top of the picture, so that a
 * viewer at the far end of a video pipeline can tell how old each frame it shows is. Off by default;
 * the streams bench turns it on (sim-cell config `simulation.timecode`).
 *
 * Layout: a band `bandHeight(height)` rows high split into TIMECODE_BLOCKS equal blocks: a white
 * and a black guard block (the reader's threshold), then TIMECODE_BITS bits of `ms mod 2^bits`,
 * most significant first, white = 1. Blocks are wide and flat so they survive lossy video codecs;
 * a reader samples each block's centre.
 */
export const TIMECODE_BITS = 16;
export const TIMECODE_BLOCKS = TIMECODE_BITS + 2;

export function bandHeight(height: number): number {
  return Math.max(8, Math.round(height / 12));
}

/** Draws the timecode of `ms` into an RGB image (3 bytes per pixel, row-major). */
export function stampTimecode(rgb: Uint8Array, width: number, height: number, ms: number): void {
  const code = Math.floor(ms) % 2 ** TIMECODE_BITS;
  const rows = bandHeight(height);
  for (let x = 0; x < width; x++) {
    const block = Math.min(TIMECODE_BLOCKS - 1, Math.floor((x * TIMECODE_BLOCKS) / width));
    const white = block === 0 || (block >= 2 && ((code >> (TIMECODE_BITS - 1 - (block - 2))) & 1) === 1);
    const value = white ? 255 : 0;
    for (let y = 0; y < rows; y++) {
      const o = (y * width + x) * 3;
      rgb[o] = value;
      rgb[o + 1] = value;
      rgb[o + 2] = value;
    }
  }
}

/**
 * Reads the timecode back from the luminance at each block's centre (`lumaAt(x, y)`, 0..255) and
 * returns the capture time it names: the latest instant at or before `nowMs` whose low bits match.
 */
export function readTimecode(lumaAt: (x: number, y: number) => number, width: number, height: number, nowMs: number): number {
  const y = Math.floor(bandHeight(height) / 2);
  const centre = (block: number) => Math.floor(((block + 0.5) * width) / TIMECODE_BLOCKS);
  const threshold = (lumaAt(centre(0), y) + lumaAt(centre(1), y)) / 2;
  let code = 0;
  for (let block = 2; block < TIMECODE_BLOCKS; block++) code = code * 2 + (lumaAt(centre(block), y) > threshold ? 1 : 0);
  const period = 2 ** TIMECODE_BITS;
  const back = (((Math.floor(nowMs) - code) % period) + period) % period;
  return Math.floor(nowMs) - back;
}

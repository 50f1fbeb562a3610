/**
 * What the RLDS writer needs of a camera's JPEG frames without decoding them: their size, read from
 * the start-of-frame segment, and a black frame of a given size for the steps before a camera's first
 * frame. TFDS declares an Image feature's shape up front and its decoder checks every frame against
 * it, so every frame of a camera must have one size.
 */
import jpeg from "jpeg-js";

export interface FrameSize {
  width: number;
  height: number;
}

/** Markers that stand alone (no length field): TEM, RST0-7, SOI. */
function isStandaloneMarker(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8);
}

/** SOF0-SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** The width and height a JPEG declares in its start-of-frame segment; throws when `bytes` is no JPEG. */
export function jpegSize(bytes: Uint8Array): FrameSize {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) {
    throw new Error(`not a JPEG: expected the SOI marker FF D8, got ${hexPrefix(bytes)} (${bytes.length} bytes)`);
  }
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) throw new Error(`JPEG marker expected at byte ${offset}, got 0x${bytes[offset].toString(16)}`);
    const marker = bytes[offset + 1];
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (isStandaloneMarker(marker)) {
      offset += 2;
      continue;
    }
    const length = (bytes[offset + 2] << 8) | bytes[offset + 3];
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) break;
      const height = (bytes[offset + 5] << 8) | bytes[offset + 6];
      const width = (bytes[offset + 7] << 8) | bytes[offset + 8];
      return { width, height };
    }
    if (marker === 0xda) break; // start of scan: image data follows, no SOF came first
    offset += 2 + length;
  }
  throw new Error(`JPEG has no start-of-frame segment before its image data (${bytes.length} bytes)`);
}

/** A black JPEG of the given size (a camera's frame before it sent its first one). */
export function blackJpeg(size: FrameSize): Uint8Array {
  const data = Buffer.alloc(size.width * size.height * 4, 0);
  return jpeg.encode({ width: size.width, height: size.height, data }, 90).data;
}

function hexPrefix(bytes: Uint8Array): string {
  return [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join(" ") || "nothing";
}

/**
 * Cuts whole JPEGs (SOI 0xFFD8 .. EOI 0xFFD9) out of a byte stream that arrives in arbitrary chunks: an
 * MJPEG-over-HTTP body or ffmpeg's image2pipe output. What lies between frames (multipart boundaries and
 * headers) is dropped. The bytes kept between chunks are bounded: a stream that never ends its frame is
 * dropped past `maxFrameBytes`, and with no frame start in sight only a trailing 0xFF (half of an SOI split
 * across chunks) is kept.
 */
const SOI = Buffer.from([0xff, 0xd8]);
const EOI = Buffer.from([0xff, 0xd9]);
/** A stream that never sends EOI must not grow the buffer without end. */
export const MAX_JPEG_FRAME_BYTES = 16 * 1024 * 1024;

export class JpegStreamSplitter {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameBytes = MAX_JPEG_FRAME_BYTES) {}

  /** The JPEGs completed by this chunk, oldest first, each in a buffer of its own. */
  push(chunk: Uint8Array): Uint8Array[] {
    let buffer = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const frames: Uint8Array[] = [];
    for (;;) {
      const start = buffer.indexOf(SOI);
      if (start < 0) {
        buffer = buffer.length > 0 && buffer[buffer.length - 1] === 0xff ? buffer.subarray(buffer.length - 1) : Buffer.alloc(0);
        break;
      }
      const end = buffer.indexOf(EOI, start + 2);
      if (end < 0) {
        buffer = buffer.length - start > this.maxFrameBytes ? Buffer.alloc(0) : buffer.subarray(start);
        break;
      }
      frames.push(new Uint8Array(buffer.subarray(start, end + 2)));
      buffer = buffer.subarray(end + 2);
    }
    // A copy, so the chunk the rest came from (often 64 KiB) is not kept alive by a few bytes of it.
    this.pending = Buffer.from(buffer);
    return frames;
  }

  /** Forgets a partial frame (the source restarted). */
  reset(): void {
    this.pending = Buffer.alloc(0);
  }
}

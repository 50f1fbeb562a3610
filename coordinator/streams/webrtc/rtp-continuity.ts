/**
 * Keeps one camera's RTP stream continuous across encoder restarts. Each ffmpeg starts its sequence
 * numbers and timestamps at random values; a receiver seeing them jump may take the new packets
 * for old ones and drop them. So the first packet after a restart is rebased to follow the last one
 * sent: the next sequence number, and the timestamp advanced by the wall-clock time in between.
 */

/** RTP video clock (90 kHz) ticks per millisecond. */
const TICKS_PER_MS = 90;

export class RtpContinuity {
  private seqOffset = 0;
  private timestampOffset = 0;
  private rebase = false;
  private last: { seq: number; timestamp: number; atMs: number } | undefined;

  /** The next packet comes from a new source (a restarted encoder). */
  newSource(): void {
    this.rebase = true;
  }

  /** Rewrites the packet's sequence number and timestamp in place. */
  rewrite(packet: Buffer, nowMs: number): void {
    const seq = packet.readUInt16BE(2);
    const timestamp = packet.readUInt32BE(4);
    if (this.rebase && this.last) {
      const elapsedTicks = Math.max(1, Math.round((nowMs - this.last.atMs) * TICKS_PER_MS));
      this.seqOffset = (this.last.seq + 1 - seq) & 0xffff;
      this.timestampOffset = (this.last.timestamp + elapsedTicks - timestamp) >>> 0;
    }
    this.rebase = false;
    const outSeq = (seq + this.seqOffset) & 0xffff;
    const outTimestamp = (timestamp + this.timestampOffset) >>> 0;
    packet.writeUInt16BE(outSeq, 2);
    packet.writeUInt32BE(outTimestamp, 4);
    this.last = { seq: outSeq, timestamp: outTimestamp, atMs: nowMs };
  }
}

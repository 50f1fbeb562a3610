/**
 * What the two servo wire protocols (Feetech STS/SCS and ROBOTIS Dynamixel 2.0) have in common, so the
 * bus and the emulator speak either through one interface.
 *
 * A parser never throws: bytes go in, and out come frames or typed frame errors. The caller decides
 * what an error means (the bus counts and retries; the emulator ignores the request, like a servo).
 */

/** The instructions both protocols share, with the same codes on the wire. */
export const Instruction = {
  ping: 0x01,
  read: 0x02,
  write: 0x03,
  syncRead: 0x82,
  syncWrite: 0x83,
} as const;

/** Broadcast id: every servo executes, none answers (except to PING / SYNC_READ). */
export const BROADCAST_ID = 0xfe;

/**
 * One decoded frame, instruction or status. `code` is the instruction byte of an instruction packet;
 * for a status packet it is the error byte (Feetech) or 0x55 (Dynamixel, whose error byte is then
 * `params[0]`): use the codec's `toStatus` rather than reading it directly.
 */
export interface Frame {
  id: number;
  code: number;
  /** Parameters after unstuffing (Dynamixel), without checksum/CRC. */
  params: Uint8Array;
  /** The frame exactly as it arrived, for logs and tests. */
  raw: Uint8Array;
}

/** A status (reply) packet from one servo. */
export interface StatusPacket {
  id: number;
  /** The raw error byte as the servo sent it (0 when all is well). */
  error: number;
  params: Uint8Array;
}

export type FrameErrorKind =
  /** Bytes before a header, or between frames, that belong to no frame. */
  | "garbage"
  /** A header whose length field or id is impossible for the protocol. */
  | "malformed"
  /** Checksum (Feetech) or CRC-16 (Dynamixel) mismatch. */
  | "checksum"
  /** A frame that began but ended before its declared length (reported by `flush()`). */
  | "short";

export interface FrameError {
  kind: FrameErrorKind;
  /** The discarded bytes. */
  bytes: Uint8Array;
  detail: string;
}

export type ParseEvent = { type: "frame"; frame: Frame } | { type: "error"; error: FrameError };

/** Incremental parser: feed any chunking of the byte stream, get events in stream order. */
export interface FrameParser {
  push(bytes: Uint8Array): ParseEvent[];
  /** Gives up on a partial frame (e.g. after a timeout): reports it as "short" and clears the buffer. */
  flush(): ParseEvent[];
  /** Bytes held waiting for the rest of a frame. */
  readonly pendingBytes: number;
}

/**
 * The byte accumulation both protocols' parsers share: bytes gather between pushes, the subclass
 * drains every whole frame (and any garbage) from `buffer`, and `flush` reports what is left as a
 * short frame when it starts like one, garbage otherwise.
 */
export abstract class BufferedFrameParser implements FrameParser {
  protected buffer = new Uint8Array(0);

  /** "frame" or "packet": what the protocol's documentation calls one. */
  protected abstract readonly unit: string;

  get pendingBytes(): number {
    return this.buffer.length;
  }

  push(bytes: Uint8Array): ParseEvent[] {
    const merged = new Uint8Array(this.buffer.length + bytes.length);
    merged.set(this.buffer, 0);
    merged.set(bytes, this.buffer.length);
    this.buffer = merged;
    return this.drain();
  }

  flush(): ParseEvent[] {
    const events = this.drain();
    if (this.buffer.length > 0) {
      const kind = this.startsFrame(this.buffer) ? "short" : "garbage";
      events.push({ type: "error", error: { kind, bytes: this.buffer, detail: `${this.buffer.length} bytes of an unfinished ${this.unit}` } });
      this.buffer = new Uint8Array(0);
    }
    return events;
  }

  /** Takes every complete frame (and garbage before it) off the front of `buffer`. */
  protected abstract drain(): ParseEvent[];

  /** Whether leftover bytes begin with the protocol's header. */
  protected abstract startsFrame(bytes: Uint8Array): boolean;
}

export type ProtocolName = "feetech" | "dynamixel";

/** Encoders and decoders for one protocol. Addresses and lengths are in register units of that protocol. */
export interface ServoCodec {
  readonly protocol: ProtocolName;
  encodeInstruction(id: number, instruction: number, params: Uint8Array | readonly number[]): Uint8Array;
  encodeStatus(id: number, error: number, params: Uint8Array | readonly number[]): Uint8Array;
  encodePing(id: number): Uint8Array;
  encodeRead(id: number, address: number, length: number): Uint8Array;
  encodeWrite(id: number, address: number, data: Uint8Array | readonly number[]): Uint8Array;
  encodeSyncRead(ids: readonly number[], address: number, length: number): Uint8Array;
  encodeSyncWrite(address: number, length: number, entries: ReadonlyArray<{ id: number; data: Uint8Array | readonly number[] }>): Uint8Array;
  /** Status view of a frame received from a servo, or null if the frame is an instruction packet. */
  toStatus(frame: Frame): StatusPacket | null;
  /** Decodes the instruction parameters of a frame (used by the emulator). */
  decodeInstruction(frame: Frame): DecodedInstruction | null;
  createParser(): FrameParser;
  /** Bytes of a status packet carrying `paramCount` parameters (before any stuffing). */
  statusLength(paramCount: number): number;
  /** True when the error byte means the servo refused the instruction (the data is not valid). */
  isInstructionError(error: number): boolean;
  describeError(error: number): string;
}

export type DecodedInstruction =
  | { kind: "ping"; id: number }
  | { kind: "read"; id: number; address: number; length: number }
  | { kind: "write"; id: number; address: number; data: Uint8Array }
  | { kind: "syncRead"; address: number; length: number; ids: number[] }
  | { kind: "syncWrite"; address: number; length: number; entries: Array<{ id: number; data: Uint8Array }> }
  | { kind: "other"; id: number; instruction: number; params: Uint8Array };

/** Little-endian unsigned integer of 1, 2 or 4 bytes. */
export function readUint(bytes: Uint8Array, offset: number, size: number): number {
  let value = 0;
  for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[offset + i];
  return value;
}

/** Little-endian bytes of an unsigned integer (negative values wrap as two's complement). */
export function uintBytes(value: number, size: number): number[] {
  const out: number[] = [];
  let v = size === 4 ? value >>> 0 : value & ((1 << (8 * size)) - 1);
  for (let i = 0; i < size; i++) {
    out.push(v & 0xff);
    v = Math.floor(v / 256);
  }
  return out;
}

export function toHex(bytes: Uint8Array | readonly number[]): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, "0")).join(" ");
}

export function fromHex(text: string): Uint8Array {
  const clean = text.replace(/[^0-9a-fA-F]/g, "");
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * Feetech STS/SCS serial servo protocol ("protocol 0" in LeRobot and scservo_sdk), as spoken by the
 * STS3215 in the SO-101 arm.
 *
 *   FF FF <id> <len> <instruction|error> <params...> <checksum>
 *
 * `len` counts the instruction (or error) byte, the parameters and the checksum: params + 2.
 * checksum = ~(id + len + instruction + params) & 0xFF. Multi-byte registers are little-endian.
 * SYNC_READ (0x82) makes each listed servo answer with its own status packet, in list order;
 * SYNC_WRITE (0x83) to the broadcast id is never answered.
 */
import {
  BROADCAST_ID,
  BufferedFrameParser,
  DecodedInstruction,
  Frame,
  FrameParser,
  Instruction,
  ParseEvent,
  ServoCodec,
  StatusPacket,
} from "./codec.js";

/** Error-byte bits of a Feetech status packet (scservo_sdk's ERRBIT_*). */
export const FeetechErrorBit = {
  voltage: 0x01,
  angle: 0x02,
  overheat: 0x04,
  overCurrent: 0x08,
  overload: 0x20,
} as const;

const HEADER = 0xff;
const MIN_LENGTH = 2;

/** ~(sum of bytes) & 0xFF over id, len, instruction/error and params. */
export function feetechChecksum(bytes: Uint8Array | readonly number[], start = 0, end = bytes.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum += bytes[i];
  return ~sum & 0xff;
}

/**
 * Sign-magnitude as Feetech registers use it: the magnitude in the low bits and the sign in
 * `signBit` (15 for STS positions, speeds and current, 11 for Homing_Offset, 10 for Present_Load).
 */
export function encodeSignMagnitude(value: number, signBit: number): number {
  const magnitude = Math.abs(Math.round(value));
  const max = (1 << signBit) - 1;
  if (magnitude > max) throw new RangeError(`sign-magnitude value out of range for sign bit ${signBit}: |${value}| > ${max}`);
  return value < 0 ? magnitude | (1 << signBit) : magnitude;
}

export function decodeSignMagnitude(raw: number, signBit: number): number {
  const magnitude = raw & ((1 << signBit) - 1);
  return raw & (1 << signBit) ? -magnitude : magnitude;
}

function frameBytes(id: number, code: number, params: Uint8Array | readonly number[]): Uint8Array {
  if (!Number.isInteger(id) || id < 0 || id > 0xfe) throw new RangeError(`feetech id must be 0..254; got ${id}`);
  if (params.length > 0xff - MIN_LENGTH) throw new RangeError(`feetech frame too long: ${params.length} parameter bytes`);
  const out = new Uint8Array(params.length + 6);
  out[0] = HEADER;
  out[1] = HEADER;
  out[2] = id;
  out[3] = params.length + MIN_LENGTH;
  out[4] = code;
  out.set(params, 5);
  out[out.length - 1] = feetechChecksum(out, 2, out.length - 1);
  return out;
}

class FeetechParser extends BufferedFrameParser {
  protected readonly unit = "frame";

  protected startsFrame(bytes: Uint8Array): boolean {
    return bytes.length >= 2 && bytes[0] === HEADER && bytes[1] === HEADER;
  }

  protected drain(): ParseEvent[] {
    const events: ParseEvent[] = [];
    const buf = this.buffer;
    let pos = 0;
    let garbageStart = -1;
    const endGarbage = (at: number): void => {
      if (garbageStart >= 0 && at > garbageStart) {
        events.push({ type: "error", error: { kind: "garbage", bytes: buf.slice(garbageStart, at), detail: `${at - garbageStart} bytes outside any frame` } });
      }
      garbageStart = -1;
    };
    while (pos < buf.length) {
      // A header is FF FF followed by an id other than FF (FF FF FF: the first FF is noise).
      if (buf[pos] !== HEADER || (pos + 1 < buf.length && buf[pos + 1] !== HEADER) || (pos + 2 < buf.length && buf[pos + 2] === HEADER)) {
        if (garbageStart < 0) garbageStart = pos;
        pos++;
        continue;
      }
      if (pos + 4 > buf.length) break;
      endGarbage(pos);
      const length = buf[pos + 3];
      if (length < MIN_LENGTH) {
        events.push({ type: "error", error: { kind: "malformed", bytes: buf.slice(pos, pos + 4), detail: `length field ${length} < ${MIN_LENGTH}` } });
        pos += 2;
        continue;
      }
      const total = length + 4;
      if (pos + total > buf.length) break;
      const expected = feetechChecksum(buf, pos + 2, pos + total - 1);
      const actual = buf[pos + total - 1];
      if (expected !== actual) {
        events.push({
          type: "error",
          error: { kind: "checksum", bytes: buf.slice(pos, pos + total), detail: `checksum 0x${actual.toString(16)} != expected 0x${expected.toString(16)}` },
        });
        // Resynchronise just past this header: a real frame may start inside a truncated one.
        pos += 2;
        continue;
      }
      const raw = buf.slice(pos, pos + total);
      events.push({ type: "frame", frame: { id: raw[2], code: raw[4], params: raw.slice(5, total - 1), raw } });
      pos += total;
    }
    endGarbage(pos < buf.length ? pos : buf.length);
    this.buffer = buf.slice(pos);
    return events;
  }
}

/** The Feetech STS/SCS codec. */
export const feetechCodec: ServoCodec = {
  protocol: "feetech",
  encodeInstruction: frameBytes,
  encodeStatus: frameBytes,
  encodePing: (id) => frameBytes(id, Instruction.ping, []),
  encodeRead: (id, address, length) => frameBytes(id, Instruction.read, [address, length]),
  encodeWrite: (id, address, data) => frameBytes(id, Instruction.write, [address, ...data]),
  encodeSyncRead: (ids, address, length) => frameBytes(BROADCAST_ID, Instruction.syncRead, [address, length, ...ids]),
  encodeSyncWrite(address, length, entries) {
    const params: number[] = [address, length];
    for (const entry of entries) {
      if (entry.data.length !== length) throw new RangeError(`sync write entry for id ${entry.id} has ${entry.data.length} bytes, expected ${length}`);
      params.push(entry.id, ...entry.data);
    }
    return frameBytes(BROADCAST_ID, Instruction.syncWrite, params);
  },
  toStatus: (frame: Frame): StatusPacket => ({ id: frame.id, error: frame.code, params: frame.params }),
  decodeInstruction(frame: Frame): DecodedInstruction | null {
    const p = frame.params;
    switch (frame.code) {
      case Instruction.ping:
        return { kind: "ping", id: frame.id };
      case Instruction.read:
        return p.length === 2 ? { kind: "read", id: frame.id, address: p[0], length: p[1] } : null;
      case Instruction.write:
        return p.length >= 2 ? { kind: "write", id: frame.id, address: p[0], data: p.slice(1) } : null;
      case Instruction.syncRead:
        return p.length >= 3 ? { kind: "syncRead", address: p[0], length: p[1], ids: Array.from(p.slice(2)) } : null;
      case Instruction.syncWrite: {
        if (p.length < 2) return null;
        const length = p[1];
        const entries: Array<{ id: number; data: Uint8Array }> = [];
        if ((p.length - 2) % (length + 1) !== 0) return null;
        for (let i = 2; i < p.length; i += length + 1) entries.push({ id: p[i], data: p.slice(i + 1, i + 1 + length) });
        return { kind: "syncWrite", address: p[0], length, entries };
      }
      default:
        return { kind: "other", id: frame.id, instruction: frame.code, params: p };
    }
  },
  createParser: () => new FeetechParser(),
  statusLength: (paramCount) => paramCount + 6,
  // Feetech error bits report the servo's condition; the data that comes with them is still valid.
  isInstructionError: () => false,
  describeError(error) {
    const names = Object.entries(FeetechErrorBit).filter(([, bit]) => error & bit).map(([name]) => name);
    return names.length ? names.join("+") : error ? `0x${error.toString(16)}` : "none";
  },
};

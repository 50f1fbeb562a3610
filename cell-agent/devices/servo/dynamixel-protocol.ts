/**
 * ROBOTIS Dynamixel Protocol 2.0, as spoken by the X series (XL430-W250, XM430-W350).
 *
 *   FF FF FD 00 <id> <len_l> <len_h> <instruction> <params...> <crc_l> <crc_h>
 *
 * `len` counts instruction + (stuffed) params + CRC. The CRC-16 (polynomial 0x8005, initial value 0,
 * not reflected) covers everything from the header to the last parameter byte as transmitted.
 * Byte stuffing: inside instruction and parameters every FF FF FD gets an extra FD (FF FF FD FD), so a
 * header can never appear inside a packet; the receiver removes it again.
 * Status packets use instruction 0x55 and carry an error byte before their parameters: bit 7 is the
 * hardware alert, bits 0-6 an error number (1 result fail ... 7 access error).
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
  readUint,
  uintBytes,
} from "./codec.js";

export const DYNAMIXEL_STATUS_INSTRUCTION = 0x55;

/** Error numbers (error byte bits 0-6) of a Protocol 2.0 status packet. */
export const DynamixelErrorNumber = {
  resultFail: 1,
  instructionError: 2,
  crcError: 3,
  dataRangeError: 4,
  dataLengthError: 5,
  dataLimitError: 6,
  accessError: 7,
} as const;

/** Error byte bit 7: the servo has a hardware error (see Hardware Error Status, address 70). */
export const DYNAMIXEL_ALERT_BIT = 0x80;

const HEADER = [0xff, 0xff, 0xfd, 0x00] as const;
const HEADER_LENGTH = 7; // header(4) + id + len(2)
const MIN_LENGTH = 3; // instruction + CRC
/** Longest packet body accepted; anything longer is treated as a corrupted length field. */
const MAX_LENGTH = 1024;

/** The ROBOTIS CRC-16 table (polynomial 0x8005), computed once: 0x0000, 0x8005, 0x800F, 0x000A, ... */
export const DYNAMIXEL_CRC_TABLE: Uint16Array = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x8005 : crc << 1;
    table[i] = crc & 0xffff;
  }
  return table;
})();

/** CRC-16 as ROBOTIS' `update_crc(0, data, size)`. */
export function dynamixelCrc(bytes: Uint8Array | readonly number[], start = 0, end = bytes.length, initial = 0): number {
  let crc = initial;
  for (let i = start; i < end; i++) crc = ((crc << 8) ^ DYNAMIXEL_CRC_TABLE[((crc >> 8) ^ bytes[i]) & 0xff]) & 0xffff;
  return crc;
}

/** Adds an FD after every FF FF FD. */
export function stuff(bytes: Uint8Array | readonly number[]): number[] {
  const out: number[] = [];
  for (const byte of bytes) {
    out.push(byte);
    const n = out.length;
    if (n >= 3 && out[n - 3] === 0xff && out[n - 2] === 0xff && out[n - 1] === 0xfd) out.push(0xfd);
  }
  return out;
}

/** Removes the FD that follows every FF FF FD. */
export function unstuff(bytes: Uint8Array | readonly number[]): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    out.push(bytes[i]);
    const n = out.length;
    if (n >= 3 && out[n - 3] === 0xff && out[n - 2] === 0xff && out[n - 1] === 0xfd && bytes[i + 1] === 0xfd) i++;
  }
  return Uint8Array.from(out);
}

function packet(id: number, instruction: number, params: Uint8Array | readonly number[]): Uint8Array {
  if (!Number.isInteger(id) || id < 0 || id > 0xfe || id === 0xfd) throw new RangeError(`dynamixel id must be 0..252 or 254; got ${id}`);
  const body = stuff([instruction, ...params]);
  const length = body.length + 2;
  const out = new Uint8Array(HEADER_LENGTH + length);
  out.set(HEADER, 0);
  out[4] = id;
  out[5] = length & 0xff;
  out[6] = length >> 8;
  out.set(body, HEADER_LENGTH);
  const crc = dynamixelCrc(out, 0, out.length - 2);
  out[out.length - 2] = crc & 0xff;
  out[out.length - 1] = crc >> 8;
  return out;
}

function isHeaderAt(buf: Uint8Array, pos: number): boolean {
  for (let i = 0; i < HEADER.length && pos + i < buf.length; i++) if (buf[pos + i] !== HEADER[i]) return false;
  return true;
}

class DynamixelParser extends BufferedFrameParser {
  protected readonly unit = "packet";

  protected startsFrame(bytes: Uint8Array): boolean {
    return bytes.length >= HEADER.length && isHeaderAt(bytes, 0);
  }

  protected drain(): ParseEvent[] {
    const events: ParseEvent[] = [];
    const buf = this.buffer;
    let pos = 0;
    let garbageStart = -1;
    const endGarbage = (at: number): void => {
      if (garbageStart >= 0 && at > garbageStart) {
        events.push({ type: "error", error: { kind: "garbage", bytes: buf.slice(garbageStart, at), detail: `${at - garbageStart} bytes outside any packet` } });
      }
      garbageStart = -1;
    };
    while (pos < buf.length) {
      if (!isHeaderAt(buf, pos)) {
        if (garbageStart < 0) garbageStart = pos;
        pos++;
        continue;
      }
      if (pos + HEADER_LENGTH > buf.length) break;
      endGarbage(pos);
      const id = buf[pos + 4];
      const length = buf[pos + 5] | (buf[pos + 6] << 8);
      if (id === 0xfd || id === 0xff || length < MIN_LENGTH || length > MAX_LENGTH) {
        events.push({ type: "error", error: { kind: "malformed", bytes: buf.slice(pos, pos + HEADER_LENGTH), detail: `impossible id ${id} or length ${length}` } });
        pos += HEADER.length;
        continue;
      }
      const total = HEADER_LENGTH + length;
      if (pos + total > buf.length) break;
      const expected = dynamixelCrc(buf, pos, pos + total - 2);
      const actual = buf[pos + total - 2] | (buf[pos + total - 1] << 8);
      if (expected !== actual) {
        events.push({
          type: "error",
          error: { kind: "checksum", bytes: buf.slice(pos, pos + total), detail: `CRC 0x${actual.toString(16)} != expected 0x${expected.toString(16)}` },
        });
        pos += HEADER.length;
        continue;
      }
      const raw = buf.slice(pos, pos + total);
      const body = unstuff(raw.subarray(HEADER_LENGTH, total - 2));
      events.push({ type: "frame", frame: { id, code: body[0], params: body.slice(1), raw } });
      pos += total;
    }
    endGarbage(pos < buf.length ? pos : buf.length);
    this.buffer = buf.slice(pos);
    return events;
  }
}

const errorNames = Object.fromEntries(Object.entries(DynamixelErrorNumber).map(([name, n]) => [n, name])) as Record<number, string>;

/** The Dynamixel Protocol 2.0 codec. */
export const dynamixelCodec: ServoCodec = {
  protocol: "dynamixel",
  encodeInstruction: packet,
  encodeStatus: (id, error, params) => packet(id, DYNAMIXEL_STATUS_INSTRUCTION, [error, ...params]),
  encodePing: (id) => packet(id, Instruction.ping, []),
  encodeRead: (id, address, length) => packet(id, Instruction.read, [...uintBytes(address, 2), ...uintBytes(length, 2)]),
  encodeWrite: (id, address, data) => packet(id, Instruction.write, [...uintBytes(address, 2), ...data]),
  encodeSyncRead: (ids, address, length) => packet(BROADCAST_ID, Instruction.syncRead, [...uintBytes(address, 2), ...uintBytes(length, 2), ...ids]),
  encodeSyncWrite(address, length, entries) {
    const params: number[] = [...uintBytes(address, 2), ...uintBytes(length, 2)];
    for (const entry of entries) {
      if (entry.data.length !== length) throw new RangeError(`sync write entry for id ${entry.id} has ${entry.data.length} bytes, expected ${length}`);
      params.push(entry.id, ...entry.data);
    }
    return packet(BROADCAST_ID, Instruction.syncWrite, params);
  },
  toStatus(frame: Frame): StatusPacket | null {
    if (frame.code !== DYNAMIXEL_STATUS_INSTRUCTION || frame.params.length < 1) return null;
    return { id: frame.id, error: frame.params[0], params: frame.params.slice(1) };
  },
  decodeInstruction(frame: Frame): DecodedInstruction | null {
    const p = frame.params;
    switch (frame.code) {
      case Instruction.ping:
        return { kind: "ping", id: frame.id };
      case Instruction.read:
        return p.length === 4 ? { kind: "read", id: frame.id, address: readUint(p, 0, 2), length: readUint(p, 2, 2) } : null;
      case Instruction.write:
        return p.length >= 3 ? { kind: "write", id: frame.id, address: readUint(p, 0, 2), data: p.slice(2) } : null;
      case Instruction.syncRead:
        return p.length >= 5 ? { kind: "syncRead", address: readUint(p, 0, 2), length: readUint(p, 2, 2), ids: Array.from(p.slice(4)) } : null;
      case Instruction.syncWrite: {
        if (p.length < 4) return null;
        const length = readUint(p, 2, 2);
        if ((p.length - 4) % (length + 1) !== 0) return null;
        const entries: Array<{ id: number; data: Uint8Array }> = [];
        for (let i = 4; i < p.length; i += length + 1) entries.push({ id: p[i], data: p.slice(i + 1, i + 1 + length) });
        return { kind: "syncWrite", address: readUint(p, 0, 2), length, entries };
      }
      default:
        return { kind: "other", id: frame.id, instruction: frame.code, params: p };
    }
  },
  createParser: () => new DynamixelParser(),
  // Worst case without stuffing; stuffing only lengthens packets whose data contains FF FF FD.
  statusLength: (paramCount) => paramCount + 11,
  isInstructionError: (error) => (error & 0x7f) !== 0,
  describeError(error) {
    const parts: string[] = [];
    if (error & 0x7f) parts.push(errorNames[error & 0x7f] ?? `error ${error & 0x7f}`);
    if (error & DYNAMIXEL_ALERT_BIT) parts.push("hardwareAlert");
    return parts.length ? parts.join("+") : "none";
  },
};

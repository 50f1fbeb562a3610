/**
 * The emulator's Dynamixel Protocol 2.0 wire, from the ROBOTIS e-manual ("DYNAMIXEL Protocol 2.0"):
 *
 *   instruction packet: FF FF FD 00 ID LEN_L LEN_H INSTRUCTION PARAM.. CRC_L CRC_H
 *   status packet:      FF FF FD 00 ID LEN_L LEN_H 0x55 ERROR PARAM.. CRC_L CRC_H
 *
 * LENGTH counts instruction, parameters (after stuffing) and CRC. The CRC is CRC-16/BUYPASS (polynomial
 * 0x8005, initial 0, no reflection) over every byte from the header to the last parameter (§2.1.7).
 * Byte stuffing (§2.1.6): after FF FF FD inside instruction and parameters the sender adds FD.
 * READ/WRITE/SYNC addresses and lengths are 2 bytes, little-endian (§3).
 */
import { WireInstruction, WIRE_BROADCAST_ID, concatBytes, littleEndian, type EmulatorWire, type WireReadResult, type WireRequest } from "./emulator-wire.js";

/** Status instruction byte (§2.2). */
const STATUS = 0x55;
/** Bodies longer than this are taken for a damaged length field. */
const MAX_LENGTH = 1024;

/** CRC-16, polynomial 0x8005, computed bit by bit (the e-manual's update_crc uses a table of the same). */
export function crc16(bytes: Uint8Array | readonly number[]): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function isHeader(buf: Uint8Array, pos: number): boolean {
  const header = [0xff, 0xff, 0xfd, 0x00];
  for (let i = 0; i < 4 && pos + i < buf.length; i++) if (buf[pos + i] !== header[i]) return false;
  return true;
}

function removeStuffing(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    out.push(bytes[i]);
    if (i >= 2 && bytes[i - 2] === 0xff && bytes[i - 1] === 0xff && bytes[i] === 0xfd && bytes[i + 1] === 0xfd) i++;
  }
  return Uint8Array.from(out);
}

function addStuffing(bytes: readonly number[]): number[] {
  const out: number[] = [];
  for (const b of bytes) {
    out.push(b);
    const n = out.length;
    if (n >= 3 && out[n - 3] === 0xff && out[n - 2] === 0xff && out[n - 1] === 0xfd) out.push(0xfd);
  }
  return out;
}

function request(id: number, instruction: number, p: Uint8Array): WireRequest | null {
  switch (instruction) {
    case WireInstruction.ping:
      return { kind: "ping", id };
    case WireInstruction.read:
      return p.length === 4 ? { kind: "read", id, address: littleEndian(p, 0, 2), length: littleEndian(p, 2, 2) } : null;
    case WireInstruction.write:
      return p.length >= 3 ? { kind: "write", id, address: littleEndian(p, 0, 2), data: p.slice(2) } : null;
    case WireInstruction.syncRead:
      return id === WIRE_BROADCAST_ID && p.length >= 5 ? { kind: "syncRead", address: littleEndian(p, 0, 2), length: littleEndian(p, 2, 2), ids: [...p.subarray(4)] } : null;
    case WireInstruction.syncWrite: {
      if (id !== WIRE_BROADCAST_ID || p.length < 4) return null;
      const length = littleEndian(p, 2, 2);
      const stride = length + 1;
      if ((p.length - 4) % stride !== 0) return null;
      const entries: Array<{ id: number; data: Uint8Array }> = [];
      for (let i = 4; i < p.length; i += stride) entries.push({ id: p[i], data: p.slice(i + 1, i + stride) });
      return { kind: "syncWrite", address: littleEndian(p, 0, 2), length, entries };
    }
    default:
      return { kind: "other", id, instruction };
  }
}

export class DynamixelWire implements EmulatorWire {
  private held = new Uint8Array(0);

  read(bytes: Uint8Array): WireReadResult {
    const buf = concatBytes(this.held, bytes);
    const result: WireReadResult = { requests: [], damaged: 0 };
    let pos = 0;
    while (pos < buf.length) {
      if (!isHeader(buf, pos)) {
        pos++;
        continue;
      }
      if (pos + 7 > buf.length) break;
      const id = buf[pos + 4];
      const length = littleEndian(buf, pos + 5, 2);
      if (id === 0xfd || id === 0xff || length < 3 || length > MAX_LENGTH) {
        result.damaged++;
        pos += 4;
        continue;
      }
      const end = pos + 7 + length;
      if (end > buf.length) break;
      if (crc16(buf.subarray(pos, end - 2)) !== littleEndian(buf, end - 2, 2)) {
        result.damaged++;
        pos += 4;
        continue;
      }
      const body = removeStuffing(buf.subarray(pos + 7, end - 2));
      const decoded = request(id, body[0], body.slice(1));
      if (decoded) result.requests.push(decoded);
      else result.damaged++;
      pos = end;
    }
    this.held = buf.slice(pos);
    return result;
  }

  status(id: number, error: number, params: readonly number[] | Uint8Array): Uint8Array {
    const body = addStuffing([STATUS, error, ...params]);
    const length = body.length + 2;
    const packet = [0xff, 0xff, 0xfd, 0x00, id, length & 0xff, length >> 8, ...body];
    const crc = crc16(packet);
    return Uint8Array.from([...packet, crc & 0xff, crc >> 8]);
  }
}

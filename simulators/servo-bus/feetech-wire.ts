/**
 * The emulator's Feetech STS/SCS wire, from Feetech's communication protocol manual (the SCS/STS
 * "memory table" protocol that LeRobot's feetech bus and scservo_sdk's protocol_packet_handler speak):
 *
 *   instruction packet: 0xFF 0xFF ID LENGTH INSTRUCTION PARAM_1 .. PARAM_N CHECKSUM
 *   status packet:      0xFF 0xFF ID LENGTH ERROR       PARAM_1 .. PARAM_N CHECKSUM
 *
 * LENGTH = N + 2; CHECKSUM = ~(ID + LENGTH + INSTRUCTION/ERROR + PARAM_1 + .. + PARAM_N), low byte.
 * READ: params (address, length). WRITE: (address, data..). SYNC READ to 0xFE: (address, length, id..),
 * each servo answers in turn. SYNC WRITE to 0xFE: (address, length, then id + length bytes per servo).
 */
import { WireInstruction, WIRE_BROADCAST_ID, concatBytes, type EmulatorWire, type WireReadResult, type WireRequest } from "./emulator-wire.js";

function checksum(bytes: Uint8Array | readonly number[]): number {
  let sum = 0;
  for (const b of bytes) sum += b;
  return 0xff - (sum & 0xff);
}

function request(id: number, instruction: number, p: Uint8Array): WireRequest | null {
  switch (instruction) {
    case WireInstruction.ping:
      return { kind: "ping", id };
    case WireInstruction.read:
      return p.length === 2 ? { kind: "read", id, address: p[0], length: p[1] } : null;
    case WireInstruction.write:
      return p.length >= 2 ? { kind: "write", id, address: p[0], data: p.slice(1) } : null;
    case WireInstruction.syncRead:
      return id === WIRE_BROADCAST_ID && p.length >= 3 ? { kind: "syncRead", address: p[0], length: p[1], ids: [...p.subarray(2)] } : null;
    case WireInstruction.syncWrite: {
      if (id !== WIRE_BROADCAST_ID || p.length < 2) return null;
      const length = p[1];
      const stride = length + 1;
      if ((p.length - 2) % stride !== 0) return null;
      const entries: Array<{ id: number; data: Uint8Array }> = [];
      for (let i = 2; i < p.length; i += stride) entries.push({ id: p[i], data: p.slice(i + 1, i + stride) });
      return { kind: "syncWrite", address: p[0], length, entries };
    }
    default:
      return { kind: "other", id, instruction };
  }
}

export class FeetechWire implements EmulatorWire {
  private held = new Uint8Array(0);

  read(bytes: Uint8Array): WireReadResult {
    const buf = concatBytes(this.held, bytes);
    const result: WireReadResult = { requests: [], damaged: 0 };
    let pos = 0;
    while (pos < buf.length) {
      // A packet starts at FF FF followed by an id; FF FF FF means the first FF was line noise.
      const headerHere = buf[pos] === 0xff && (pos + 1 >= buf.length || buf[pos + 1] === 0xff) && (pos + 2 >= buf.length || buf[pos + 2] !== 0xff);
      if (!headerHere) {
        pos++;
        continue;
      }
      if (pos + 4 > buf.length) break;
      const length = buf[pos + 3];
      if (length < 2) {
        result.damaged++;
        pos += 2;
        continue;
      }
      const end = pos + 4 + length;
      if (end > buf.length) break;
      if (checksum(buf.subarray(pos + 2, end - 1)) !== buf[end - 1]) {
        result.damaged++;
        pos += 2;
        continue;
      }
      const decoded = request(buf[pos + 2], buf[pos + 4], buf.slice(pos + 5, end - 1));
      if (decoded) result.requests.push(decoded);
      else result.damaged++;
      pos = end;
    }
    this.held = buf.slice(pos);
    return result;
  }

  status(id: number, error: number, params: readonly number[] | Uint8Array): Uint8Array {
    const body = [id, params.length + 2, error, ...params];
    return Uint8Array.from([0xff, 0xff, ...body, checksum(body)]);
  }
}

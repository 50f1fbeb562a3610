/**
 * What the servo emulator hears and says on its bus, independent of the protocol: the requests it
 * serves and one incremental request reader per protocol (feetech-wire.ts, dynamixel-wire.ts). The
 * emulator keeps its own wire code, written from the protocol documents, so that a bug in the driver's
 * codec is not agreed by both sides (STYLE.md, Tests).
 */

/** Instruction bytes both protocols share (Feetech memory-table manual; ROBOTIS Protocol 2.0 §3). */
export const WireInstruction = { ping: 0x01, read: 0x02, write: 0x03, syncRead: 0x82, syncWrite: 0x83 } as const;

/** The broadcast id of both protocols. */
export const WIRE_BROADCAST_ID = 0xfe;

export type WireRequest =
  | { kind: "ping"; id: number }
  | { kind: "read"; id: number; address: number; length: number }
  | { kind: "write"; id: number; address: number; data: Uint8Array }
  | { kind: "syncRead"; address: number; length: number; ids: number[] }
  | { kind: "syncWrite"; address: number; length: number; entries: Array<{ id: number; data: Uint8Array }> }
  | { kind: "other"; id: number; instruction: number };

/**
 * What one chunk of host bytes held: requests, and how many packets were damaged (bad checksum,
 * impossible length, parameters that do not fit the instruction). Noise outside packets is dropped
 * silently, as a servo does.
 */
export interface WireReadResult {
  requests: WireRequest[];
  damaged: number;
}

/** One protocol's side of the emulator: reads requests, writes status packets. */
export interface EmulatorWire {
  /** Feeds bytes from the host; whole packets come out, a partial one waits for the rest. */
  read(bytes: Uint8Array): WireReadResult;
  /** A status packet from `id` with the given error byte and parameters. */
  status(id: number, error: number, params: readonly number[] | Uint8Array): Uint8Array;
}

/** Little-endian unsigned integer of `size` bytes at `offset`. */
export function littleEndian(bytes: Uint8Array, offset: number, size: number): number {
  let value = 0;
  for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[offset + i];
  return value;
}

/** Appends `more` to `held` (the bytes kept from the last read). */
export function concatBytes(held: Uint8Array, more: Uint8Array): Uint8Array {
  const out = new Uint8Array(held.length + more.length);
  out.set(held, 0);
  out.set(more, held.length);
  return out;
}

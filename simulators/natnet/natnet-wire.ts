/**
 * The NatNet emulator's own packets, written from NaturalPoint's NatNet SDK documentation and its
 * sample client (NatNetClient.py, NatNet 4.1), not from the agent's codec: the emulator must not agree
 * with a driver bug (STYLE.md, Tests). Known answers in test/unit/natnet-wire-known-answers.spec.ts pin
 * both sides to the same bytes.
 *
 * Every packet: uint16 message id, uint16 payload bytes, payload; all little-endian.
 * - NAT_SERVERINFO (sServerDescription): char[256] server name, uint8[4] server version, uint8[4] NatNet
 *   version, uint64 high-resolution clock frequency, uint16 data port, uint8 multicast, uint8[4] group.
 * - NAT_MODELDEF: int32 count, then per description int32 type (1 = rigid body), NUL-terminated name,
 *   int32 id, int32 parent id, float32[3] offset, and from 3.0 int32 marker count (0 here).
 * - NAT_FRAMEOFDATA: int32 frame number; sections marker sets, legacy markers, rigid bodies, skeletons,
 *   assets (4.1+), labeled markers, force plates, devices, each an int32 count followed (4.1+) by an int32
 *   byte size; a rigid body is int32 id, float32[3] position, float32[4] quaternion (x, y, z, w), float32
 *   mean marker error, int16 params (bit 0: tracking valid). Suffix: uint32 timecode, uint32 subframe,
 *   float64 timestamp, from 3.0 uint64 stamps (camera mid-exposure, data received, transmit), from 4.0
 *   uint32 precision seconds and fraction, then int16 params (bit 0 recording, bit 1 models changed).
 */

export const NatNetMessageId = {
  connect: 0,
  serverInfo: 1,
  requestModelDef: 4,
  modelDef: 5,
  frameOfData: 7,
  disconnect: 9,
  keepAlive: 10,
  unrecognizedRequest: 100,
} as const;

/** Major, minor, build, revision. */
export type EmulatedNatNetVersion = readonly [number, number, number, number];

export interface ServerDescription {
  appName: string;
  appVersion: EmulatedNatNetVersion;
  natNetVersion: EmulatedNatNetVersion;
  highResClockHz: bigint;
  dataPort: number;
  multicastAddress: string | null;
}

export interface EmulatedRigidBody {
  id: number;
  positionM: readonly [number, number, number];
  orientation: readonly [number, number, number, number];
  meanErrorM: number;
  trackingValid: boolean;
}

export interface EmulatedFrame {
  frameNumber: number;
  timestampS: number;
  /** One high-resolution clock stamp used for all three suffix stamps. */
  stamp: bigint;
  trackedModelsChanged: boolean;
  rigidBodies: readonly EmulatedRigidBody[];
}

/** Growable little-endian byte builder. */
class Bytes {
  private chunks: Buffer[] = [];
  length = 0;

  private add(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  u8(v: number): void { this.add(Buffer.of(v & 0xff)); }
  u16(v: number): void { const b = Buffer.alloc(2); b.writeUInt16LE(v); this.add(b); }
  i16(v: number): void { const b = Buffer.alloc(2); b.writeInt16LE(v); this.add(b); }
  i32(v: number): void { const b = Buffer.alloc(4); b.writeInt32LE(v); this.add(b); }
  u32(v: number): void { const b = Buffer.alloc(4); b.writeUInt32LE(v >>> 0); this.add(b); }
  u64(v: bigint): void { const b = Buffer.alloc(8); b.writeBigUInt64LE(v); this.add(b); }
  f32(v: number): void { const b = Buffer.alloc(4); b.writeFloatLE(v); this.add(b); }
  f64(v: number): void { const b = Buffer.alloc(8); b.writeDoubleLE(v); this.add(b); }
  raw(b: Uint8Array): void { this.add(Buffer.from(b)); }
  build(): Buffer { return Buffer.concat(this.chunks); }
}

function packet(messageId: number, payload: Buffer): Buffer {
  if (payload.length > 0xffff) throw new RangeError(`NatNet emulator: ${payload.length}-byte payload does not fit the uint16 size`);
  const head = Buffer.alloc(4);
  head.writeUInt16LE(messageId, 0);
  head.writeUInt16LE(payload.length, 2);
  return Buffer.concat([head, payload]);
}

/** From 4.1 each frame section count is followed by the section's size in bytes. */
function sectionSizes(v: EmulatedNatNetVersion): boolean {
  return v[0] > 4 || (v[0] === 4 && v[1] >= 1);
}

export function serverInfoPacket(info: ServerDescription): Buffer {
  const b = new Bytes();
  const name = Buffer.alloc(256);
  name.write(info.appName.slice(0, 255), "utf8");
  b.raw(name);
  info.appVersion.forEach((x) => b.u8(x));
  info.natNetVersion.forEach((x) => b.u8(x));
  b.u64(info.highResClockHz);
  b.u16(info.dataPort);
  b.u8(info.multicastAddress ? 1 : 0);
  (info.multicastAddress ?? "0.0.0.0").split(".").forEach((x) => b.u8(Number(x)));
  return packet(NatNetMessageId.serverInfo, b.build());
}

export function modelDefPacket(bodies: ReadonlyArray<{ name: string; id: number }>, version: EmulatedNatNetVersion): Buffer {
  const b = new Bytes();
  b.i32(bodies.length);
  for (const body of bodies) {
    b.i32(1);
    b.raw(Buffer.from(`${body.name}\0`, "utf8"));
    b.i32(body.id);
    b.i32(-1);
    for (let i = 0; i < 3; i++) b.f32(0);
    if (version[0] >= 3) b.i32(0);
  }
  return packet(NatNetMessageId.modelDef, b.build());
}

export function framePacket(frame: EmulatedFrame, version: EmulatedNatNetVersion): Buffer {
  const sized = sectionSizes(version);
  const b = new Bytes();
  const section = (count: number, body: Buffer): void => {
    b.i32(count);
    if (sized) b.i32(body.length);
    b.raw(body);
  };
  const empty = Buffer.alloc(0);
  b.i32(frame.frameNumber);
  section(0, empty); // marker sets
  section(0, empty); // legacy markers
  const bodies = new Bytes();
  for (const body of frame.rigidBodies) {
    bodies.i32(body.id);
    body.positionM.forEach((x) => bodies.f32(x));
    body.orientation.forEach((x) => bodies.f32(x));
    bodies.f32(body.meanErrorM);
    bodies.i16(body.trackingValid ? 1 : 0);
  }
  section(frame.rigidBodies.length, bodies.build());
  section(0, empty); // skeletons
  if (sized) section(0, empty); // assets
  section(0, empty); // labeled markers
  section(0, empty); // force plates
  section(0, empty); // devices
  b.u32(0);
  b.u32(0);
  b.f64(frame.timestampS);
  if (version[0] >= 3) for (let i = 0; i < 3; i++) b.u64(frame.stamp);
  if (version[0] >= 4) {
    b.u32(0);
    b.u32(0);
  }
  b.i16(frame.trackedModelsChanged ? 0x02 : 0);
  return packet(NatNetMessageId.frameOfData, b.build());
}

/** A reply with no payload (NAT_UNRECOGNIZED_REQUEST). */
export function emptyPacket(messageId: number): Buffer {
  return packet(messageId, Buffer.alloc(0));
}

/** The message id of a request from a client, or null when the datagram cannot be one. */
export function requestId(datagram: Uint8Array): number | null {
  if (datagram.length < 4) return null;
  const size = datagram[2] | (datagram[3] << 8);
  if (4 + size > datagram.length) return null;
  return datagram[0] | (datagram[1] << 8);
}

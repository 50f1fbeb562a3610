/**
 * OptiTrack NatNet packets, byte for byte: the command-channel messages (connect, server info, model
 * definition request and reply, keep-alive) and the frame of data, in bitstream versions 3.0 to 4.1.
 *
 * Every packet is `uint16 messageId, uint16 payloadBytes, payload`, little-endian. Layouts follow
 * NaturalPoint's NatNet SDK sample client (NatNetClient.py, NatNet 4.1, Apache-2.0): sServerDescription
 * for NAT_SERVERINFO, sConnectionOptions after the sender block in NAT_CONNECT, data descriptions for
 * NAT_MODELDEF, and the frame sections in stream order (marker sets, legacy markers, rigid bodies,
 * skeletons, assets (4.1+), labeled markers, force plates, devices, suffix). From 4.1 every section count
 * is followed by the section's size in bytes.
 */

export const NAT_CONNECT = 0;
export const NAT_SERVERINFO = 1;
export const NAT_REQUEST = 2;
export const NAT_RESPONSE = 3;
export const NAT_REQUEST_MODELDEF = 4;
export const NAT_MODELDEF = 5;
export const NAT_REQUEST_FRAMEOFDATA = 6;
export const NAT_FRAMEOFDATA = 7;
export const NAT_MESSAGESTRING = 8;
export const NAT_DISCONNECT = 9;
export const NAT_KEEPALIVE = 10;
export const NAT_UNRECOGNIZED_REQUEST = 100;

/** Major, minor, build, revision. */
export type NatNetVersion = readonly [number, number, number, number];

/** A packet that cannot be decoded: what was wrong, for counters and logs. */
export class NatNetDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NatNetDecodeError";
  }
}

export interface ServerInfo {
  appName: string;
  appVersion: NatNetVersion;
  natNetVersion: NatNetVersion;
  /** Ticks per second of the server's high-resolution clock (the frame suffix's uint64 stamps). */
  highResClockFrequency: bigint;
  dataPort: number;
  multicast: boolean;
  multicastAddress: string;
}

export interface ConnectRequest {
  appName: string;
  /** Bitstream version the client asks for; [0,0,0,0] lets the server choose. */
  requestedVersion: NatNetVersion;
}

export interface RigidBodyDescription {
  name: string;
  id: number;
  parentId: number;
  offsetM: [number, number, number];
}

export interface NatNetRigidBody {
  id: number;
  positionM: [number, number, number];
  /** qx, qy, qz, qw. */
  orientation: [number, number, number, number];
  /** Mean marker error, metres. */
  meanErrorM: number;
  trackingValid: boolean;
}

export interface NatNetFrame {
  frameNumber: number;
  rigidBodies: NatNetRigidBody[];
  /** Seconds since the server started (frame suffix timestamp). */
  timestampS: number;
  /** High-resolution clock stamps (NatNet 3.0+), in ticks of `highResClockFrequency`. */
  stampCameraMidExposure: bigint;
  stampDataReceived: bigint;
  stampTransmit: bigint;
  /** Suffix bit 1: the set of tracked models changed; clients should ask for the model definitions again. */
  trackedModelsChanged: boolean;
  /** Items in the sections this codec reads past (marker sets, markers, skeleton bones, force plates, devices). */
  otherItems: number;
}

export type NatNetMessage =
  | { id: typeof NAT_CONNECT; connect: ConnectRequest }
  | { id: typeof NAT_SERVERINFO; serverInfo: ServerInfo }
  | { id: typeof NAT_REQUEST_MODELDEF }
  | { id: typeof NAT_MODELDEF; rigidBodies: RigidBodyDescription[] }
  | { id: typeof NAT_FRAMEOFDATA; frame: NatNetFrame }
  | { id: typeof NAT_KEEPALIVE }
  | { id: typeof NAT_DISCONNECT }
  | { id: number; other: Uint8Array };

const SENDER_NAME_BYTES = 256;
const SENDER_BYTES = SENDER_NAME_BYTES + 8;

/** Bitstream versions with a byte count after each frame section count (4.1 and later). */
function hasSectionSizes(v: NatNetVersion): boolean {
  return (v[0] === 4 && v[1] > 0) || v[0] > 4;
}

/** Little-endian writer that grows as needed. */
class Writer {
  private buffer = Buffer.alloc(256);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const bigger = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + n));
    this.buffer.copy(bigger, 0, 0, this.length);
    this.buffer = bigger;
  }

  u8(v: number): void { this.room(1); this.buffer.writeUInt8(v, this.length); this.length += 1; }
  u16(v: number): void { this.room(2); this.buffer.writeUInt16LE(v, this.length); this.length += 2; }
  i16(v: number): void { this.room(2); this.buffer.writeInt16LE(v, this.length); this.length += 2; }
  i32(v: number): void { this.room(4); this.buffer.writeInt32LE(v, this.length); this.length += 4; }
  u32(v: number): void { this.room(4); this.buffer.writeUInt32LE(v >>> 0, this.length); this.length += 4; }
  u64(v: bigint): void { this.room(8); this.buffer.writeBigUInt64LE(v, this.length); this.length += 8; }
  f32(v: number): void { this.room(4); this.buffer.writeFloatLE(v, this.length); this.length += 4; }
  f64(v: number): void { this.room(8); this.buffer.writeDoubleLE(v, this.length); this.length += 8; }
  bytes(b: Uint8Array): void { this.room(b.length); this.buffer.set(b, this.length); this.length += b.length; }
  cstring(s: string): void { this.bytes(Buffer.from(s, "utf8")); this.u8(0); }
  /** A fixed-size, zero-padded string field (always NUL-terminated). */
  fixedString(s: string, size: number): void {
    const field = Buffer.alloc(size);
    Buffer.from(s, "utf8").copy(field, 0, 0, size - 1);
    this.bytes(field);
  }
  /** Placeholder for an int32 filled in later; returns its offset. */
  reserve32(): number { const at = this.length; this.i32(0); return at; }
  patch32(at: number, v: number): void { this.buffer.writeInt32LE(v, at); }
  done(): Buffer { return this.buffer.subarray(0, this.length); }
}

/** Bounds-checked little-endian reader; every overrun is a NatNetDecodeError. */
class Reader {
  offset = 0;
  constructor(private readonly buffer: Buffer, private readonly end: number, private readonly what: string) {}

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(n: number, field: string): void {
    if (this.offset + n > this.end) throw new NatNetDecodeError(`${this.what}: packet ends inside ${field} (needs ${n} bytes at offset ${this.offset}, ${this.remaining} left)`);
  }

  u8(field: string): number { this.need(1, field); return this.buffer.readUInt8(this.offset++); }
  u16(field: string): number { this.need(2, field); const v = this.buffer.readUInt16LE(this.offset); this.offset += 2; return v; }
  i16(field: string): number { this.need(2, field); const v = this.buffer.readInt16LE(this.offset); this.offset += 2; return v; }
  i32(field: string): number { this.need(4, field); const v = this.buffer.readInt32LE(this.offset); this.offset += 4; return v; }
  u32(field: string): number { this.need(4, field); const v = this.buffer.readUInt32LE(this.offset); this.offset += 4; return v; }
  u64(field: string): bigint { this.need(8, field); const v = this.buffer.readBigUInt64LE(this.offset); this.offset += 8; return v; }
  f32(field: string): number { this.need(4, field); const v = this.buffer.readFloatLE(this.offset); this.offset += 4; return v; }
  f64(field: string): number { this.need(8, field); const v = this.buffer.readDoubleLE(this.offset); this.offset += 8; return v; }
  skip(n: number, field: string): void { this.need(n, field); this.offset += n; }
  vec3(field: string): [number, number, number] { return [this.f32(field), this.f32(field), this.f32(field)]; }

  /** A count that must be non-negative and small enough for `minItemBytes` each to fit in the rest. */
  count(field: string, minItemBytes: number): number {
    const n = this.i32(field);
    if (n < 0 || n * minItemBytes > this.remaining) throw new NatNetDecodeError(`${this.what}: ${field} ${n} cannot fit in the ${this.remaining} bytes left`);
    return n;
  }

  cstring(field: string): string {
    const at = this.buffer.indexOf(0, this.offset);
    if (at < 0 || at >= this.end) throw new NatNetDecodeError(`${this.what}: ${field} is not NUL-terminated`);
    const s = this.buffer.toString("utf8", this.offset, at);
    this.offset = at + 1;
    return s;
  }

  fixedString(size: number, field: string): string {
    this.need(size, field);
    const raw = this.buffer.subarray(this.offset, this.offset + size);
    this.offset += size;
    const nul = raw.indexOf(0);
    return raw.toString("utf8", 0, nul < 0 ? size : nul);
  }

  version(field: string): NatNetVersion {
    return [this.u8(field), this.u8(field), this.u8(field), this.u8(field)];
  }
}

function packet(messageId: number, payload: Uint8Array): Buffer {
  if (payload.length > 0xffff) throw new RangeError(`NatNet payload of ${payload.length} bytes does not fit the uint16 size field`);
  const out = Buffer.alloc(4 + payload.length);
  out.writeUInt16LE(messageId, 0);
  out.writeUInt16LE(payload.length, 2);
  out.set(payload, 4);
  return out;
}

/** NAT_CONNECT: sender block (name, versions), then sConnectionOptions (subscribedDataOnly, bitstream version). */
export function encodeConnect(request: ConnectRequest): Buffer {
  const w = new Writer();
  w.fixedString(request.appName, SENDER_NAME_BYTES);
  w.bytes(new Uint8Array(8));
  w.u8(0);
  for (const b of request.requestedVersion) w.u8(b);
  w.u8(0);
  w.u8(0);
  return packet(NAT_CONNECT, w.done());
}

export function encodeServerInfo(info: ServerInfo): Buffer {
  const w = new Writer();
  w.fixedString(info.appName, SENDER_NAME_BYTES);
  for (const b of info.appVersion) w.u8(b);
  for (const b of info.natNetVersion) w.u8(b);
  w.u64(info.highResClockFrequency);
  w.u16(info.dataPort);
  w.u8(info.multicast ? 1 : 0);
  for (const part of info.multicastAddress.split(".")) w.u8(Number(part) || 0);
  return packet(NAT_SERVERINFO, w.done());
}

/** A request with an empty payload (NAT_REQUEST_MODELDEF, NAT_KEEPALIVE, NAT_DISCONNECT). */
export function encodeEmpty(messageId: number): Buffer {
  return packet(messageId, new Uint8Array(0));
}

/** NAT_MODELDEF with one rigid body description (type 1) per body, no markers. */
export function encodeModelDef(bodies: readonly RigidBodyDescription[], version: NatNetVersion): Buffer {
  const w = new Writer();
  w.i32(bodies.length);
  for (const body of bodies) {
    w.i32(1);
    w.cstring(body.name);
    w.i32(body.id);
    w.i32(body.parentId);
    for (const v of body.offsetM) w.f32(v);
    if (version[0] >= 3) w.i32(0);
  }
  return packet(NAT_MODELDEF, w.done());
}

/** A NAT_FRAMEOFDATA with rigid bodies only (every other section empty). */
export function encodeFrame(frame: Omit<NatNetFrame, "otherItems">, version: NatNetVersion): Buffer {
  const w = new Writer();
  const sized = hasSectionSizes(version);
  const emptySection = (): void => {
    w.i32(0);
    if (sized) w.i32(0);
  };
  w.i32(frame.frameNumber);
  emptySection(); // marker sets
  emptySection(); // legacy "other" markers
  w.i32(frame.rigidBodies.length);
  const sizeAt = sized ? w.reserve32() : -1;
  const start = w.length;
  for (const body of frame.rigidBodies) {
    w.i32(body.id);
    for (const v of body.positionM) w.f32(v);
    for (const v of body.orientation) w.f32(v);
    w.f32(body.meanErrorM);
    w.i16(body.trackingValid ? 1 : 0);
  }
  if (sized) w.patch32(sizeAt, w.length - start);
  emptySection(); // skeletons
  if (sized) emptySection(); // assets
  emptySection(); // labeled markers
  emptySection(); // force plates
  emptySection(); // devices
  w.u32(0); // timecode
  w.u32(0); // timecode sub
  w.f64(frame.timestampS);
  if (version[0] >= 3) {
    w.u64(frame.stampCameraMidExposure);
    w.u64(frame.stampDataReceived);
    w.u64(frame.stampTransmit);
  }
  if (version[0] >= 4) {
    w.u32(0); // precision timestamp, s
    w.u32(0); // precision timestamp, fraction
  }
  w.i16(frame.trackedModelsChanged ? 2 : 0);
  return packet(NAT_FRAMEOFDATA, w.done());
}

/**
 * Decodes one datagram. `version` is the bitstream version in use (from NAT_SERVERINFO); it decides the
 * frame and model definition layouts. Throws NatNetDecodeError for anything short, inconsistent or
 * from a version before 3.0.
 */
export function decodeMessage(datagram: Uint8Array, version: NatNetVersion): NatNetMessage {
  const buffer = Buffer.from(datagram.buffer, datagram.byteOffset, datagram.byteLength);
  if (buffer.length < 4) throw new NatNetDecodeError(`packet of ${buffer.length} bytes is shorter than the 4-byte header`);
  const id = buffer.readUInt16LE(0);
  const size = buffer.readUInt16LE(2);
  if (4 + size > buffer.length) throw new NatNetDecodeError(`message ${id} declares ${size} payload bytes but the packet carries ${buffer.length - 4}`);
  const r = new Reader(buffer, 4 + size, `message ${id}`);
  r.offset = 4;
  switch (id) {
    case NAT_CONNECT: {
      const appName = r.fixedString(SENDER_NAME_BYTES, "sender name");
      r.skip(Math.min(8, r.remaining), "sender versions");
      let requestedVersion: NatNetVersion = [0, 0, 0, 0];
      if (r.remaining >= 5) {
        r.u8("subscribedDataOnly");
        requestedVersion = r.version("bitstream version");
      }
      return { id, connect: { appName, requestedVersion } };
    }
    case NAT_SERVERINFO: {
      const appName = r.fixedString(SENDER_NAME_BYTES, "server name");
      const appVersion = r.version("server version");
      const natNetVersion = r.version("NatNet version");
      // Older servers stop after the versions.
      const full = r.remaining >= 15;
      const highResClockFrequency = full ? r.u64("clock frequency") : 0n;
      const dataPort = full ? r.u16("data port") : 0;
      const multicast = full ? r.u8("multicast flag") !== 0 : false;
      const multicastAddress = full ? [r.u8("group"), r.u8("group"), r.u8("group"), r.u8("group")].join(".") : "";
      return { id, serverInfo: { appName, appVersion, natNetVersion, highResClockFrequency, dataPort, multicast, multicastAddress } };
    }
    case NAT_MODELDEF:
      return { id, rigidBodies: decodeModelDef(r, version) };
    case NAT_FRAMEOFDATA:
      return { id, frame: decodeFrame(r, version) };
    case NAT_REQUEST_MODELDEF:
    case NAT_KEEPALIVE:
    case NAT_DISCONNECT:
      return { id } as NatNetMessage;
    default:
      return { id, other: new Uint8Array(buffer.subarray(4, 4 + size)) };
  }
}

function checkVersion(version: NatNetVersion, what: string): void {
  if (version[0] < 3) throw new NatNetDecodeError(`${what}: bitstream version ${version.join(".")} is not supported (3.0 or later; set Motive's streaming to NatNet 3 or 4)`);
}

function decodeRigidBodyDescription(r: Reader, version: NatNetVersion): RigidBodyDescription {
  const name = r.cstring("rigid body name");
  const id = r.i32("rigid body id");
  const parentId = r.i32("parent id");
  const offsetM = r.vec3("offset");
  const markers = r.count("marker count", 16);
  r.skip(markers * 16, "marker offsets and labels");
  if (version[0] >= 4) for (let i = 0; i < markers; i++) r.cstring("marker name");
  return { name, id, parentId, offsetM };
}

function decodeModelDef(r: Reader, version: NatNetVersion): RigidBodyDescription[] {
  checkVersion(version, "model definitions");
  const bodies: RigidBodyDescription[] = [];
  const datasets = r.count("dataset count", 4);
  for (let i = 0; i < datasets; i++) {
    const type = r.i32("dataset type");
    if (type === 0) {
      r.cstring("marker set name");
      const n = r.count("marker count", 1);
      for (let k = 0; k < n; k++) r.cstring("marker name");
    } else if (type === 1) {
      bodies.push(decodeRigidBodyDescription(r, version));
    } else if (type === 2) {
      r.cstring("skeleton name");
      r.i32("skeleton id");
      const bones = r.count("bone count", 24);
      for (let k = 0; k < bones; k++) decodeRigidBodyDescription(r, version);
    } else {
      // Force plates, devices, cameras and assets are long; nothing after them is needed. Stop here.
      break;
    }
  }
  return bodies;
}

/** Skips a section whose items cannot be read (4.1+ assets) using its byte count. */
function sectionSize(r: Reader, version: NatNetVersion, field: string): number | null {
  return hasSectionSizes(version) ? r.i32(`${field} size`) : null;
}

function decodeFrame(r: Reader, version: NatNetVersion): NatNetFrame {
  checkVersion(version, "frame of data");
  let otherItems = 0;
  const frameNumber = r.i32("frame number");

  const markerSets = r.count("marker set count", 5);
  sectionSize(r, version, "marker sets");
  for (let i = 0; i < markerSets; i++) {
    r.cstring("marker set name");
    const n = r.count("marker count", 12);
    r.skip(n * 12, "marker positions");
    otherItems += n;
  }
  const legacy = r.count("legacy marker count", 12);
  sectionSize(r, version, "legacy markers");
  r.skip(legacy * 12, "legacy markers");
  otherItems += legacy;

  const rigidBodies: NatNetRigidBody[] = [];
  const bodies = r.count("rigid body count", 38);
  sectionSize(r, version, "rigid bodies");
  for (let i = 0; i < bodies; i++) rigidBodies.push(decodeRigidBody(r));

  const skeletons = r.count("skeleton count", 8);
  sectionSize(r, version, "skeletons");
  for (let i = 0; i < skeletons; i++) {
    r.i32("skeleton id");
    const bones = r.count("bone count", 38);
    for (let k = 0; k < bones; k++) decodeRigidBody(r);
    otherItems += bones;
  }

  if (hasSectionSizes(version)) {
    const assets = r.count("asset count", 0);
    const bytes = r.i32("assets size");
    if (bytes < 0) throw new NatNetDecodeError(`frame of data: assets size ${bytes} is negative`);
    r.skip(bytes, "assets");
    otherItems += assets;
  }

  const labeled = r.count("labeled marker count", 26);
  sectionSize(r, version, "labeled markers");
  // id, x y z, size, params (int16), residual: 26 bytes each (3.0+).
  r.skip(labeled * 26, "labeled markers");
  otherItems += labeled;

  for (const section of ["force plate", "device"]) {
    const n = r.count(`${section} count`, 8);
    sectionSize(r, version, `${section}s`);
    for (let i = 0; i < n; i++) {
      r.i32(`${section} id`);
      const channels = r.count("channel count", 4);
      for (let c = 0; c < channels; c++) {
        const frames = r.count("channel frame count", 4);
        r.skip(frames * 4, "channel values");
      }
    }
    otherItems += n;
  }

  r.u32("timecode");
  r.u32("timecode sub");
  const timestampS = r.f64("timestamp");
  const stampCameraMidExposure = r.u64("mid-exposure stamp");
  const stampDataReceived = r.u64("data received stamp");
  const stampTransmit = r.u64("transmit stamp");
  if (version[0] >= 4) {
    r.u32("precision timestamp");
    r.u32("precision timestamp fraction");
  }
  const params = r.i16("frame params");
  return { frameNumber, rigidBodies, timestampS, stampCameraMidExposure, stampDataReceived, stampTransmit, trackedModelsChanged: (params & 2) !== 0, otherItems };
}

function decodeRigidBody(r: Reader): NatNetRigidBody {
  const id = r.i32("rigid body id");
  const positionM = r.vec3("rigid body position");
  const orientation: [number, number, number, number] = [r.f32("orientation"), r.f32("orientation"), r.f32("orientation"), r.f32("orientation")];
  const meanErrorM = r.f32("mean marker error");
  const params = r.i16("rigid body params");
  return { id, positionM, orientation, meanErrorM, trackingValid: (params & 1) !== 0 };
}

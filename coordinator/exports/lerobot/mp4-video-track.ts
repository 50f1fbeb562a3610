/**
 * What an export needs to know of a cell's episode video before it copies the video's packets into
 * a dataset file without decoding them: its first video track's codec, size, sample count, sample
 * durations and the decoder configuration (`avcC`: the SPS/PPS every packet is decoded with). Read
 * from the MP4's boxes (ISO/IEC 14496-12, 14496-15) with a few reads of the `moov` box alone.
 */
import { open } from "node:fs/promises";

export interface Mp4VideoTrack {
  /** The sample entry's type, `avc1` for H.264. */
  codec: string;
  widthPx: number;
  heightPx: number;
  samples: number;
  timescale: number;
  /** stts: runs of samples with the same duration, in `timescale` units. */
  deltas: Array<{ count: number; delta: number }>;
  /** The `avcC` box's payload (hex): segments join into one stream only when these are equal. */
  decoderConfig: string;
}

interface Box {
  type: string;
  start: number;
  end: number;
}

function boxesIn(data: Buffer, from: number, to: number): Box[] {
  const found: Box[] = [];
  for (let at = from; at + 8 <= to; ) {
    let size = data.readUInt32BE(at);
    const type = data.toString("latin1", at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) throw new Error(`MP4 box "${type}" of ${size} bytes at ${at} runs past its parent`);
    found.push({ type, start: at + header, end: at + size });
    at += size;
  }
  return found;
}

function childBox(data: Buffer, parent: Box, type: string): Box {
  const box = boxesIn(data, parent.start, parent.end).find((b) => b.type === type);
  if (!box) throw new Error(`MP4 box "${parent.type}" has no "${type}"`);
  return box;
}

/** The `moov` box's bytes, found by walking the top-level box headers. */
async function readMoov(path: string): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const size = (await handle.stat()).size;
    const header = Buffer.alloc(16);
    for (let at = 0; at + 8 <= size; ) {
      await handle.read(header, 0, 16, at);
      let boxSize = header.readUInt32BE(0);
      const type = header.toString("latin1", 4, 8);
      if (boxSize === 1) boxSize = Number(header.readBigUInt64BE(8));
      else if (boxSize === 0) boxSize = size - at;
      if (boxSize < 8 || at + boxSize > size) throw new Error(`MP4 box "${type}" of ${boxSize} bytes at ${at} runs past the file's ${size} bytes`);
      if (type === "moov") {
        const moov = Buffer.alloc(boxSize);
        await handle.read(moov, 0, boxSize, at);
        return moov;
      }
      at += boxSize;
    }
    throw new Error("the file has no moov box");
  } finally {
    await handle.close();
  }
}

/** The first video track of the MP4 at `path`; throws with the reason when it cannot be read. */
export async function readMp4VideoTrack(path: string): Promise<Mp4VideoTrack> {
  const data = await readMoov(path);
  const [moov] = boxesIn(data, 0, data.length);
  for (const trak of boxesIn(data, moov!.start, moov!.end).filter((b) => b.type === "trak")) {
    const mdia = childBox(data, trak, "mdia");
    const hdlr = childBox(data, mdia, "hdlr");
    if (data.toString("latin1", hdlr.start + 8, hdlr.start + 12) !== "vide") continue;
    const mdhd = childBox(data, mdia, "mdhd");
    const timescale = data.readUInt8(mdhd.start) === 1 ? data.readUInt32BE(mdhd.start + 20) : data.readUInt32BE(mdhd.start + 12);
    const stbl = childBox(data, childBox(data, mdia, "minf"), "stbl");
    const stts = childBox(data, stbl, "stts");
    const entries = data.readUInt32BE(stts.start + 4);
    const deltas = Array.from({ length: entries }, (_, i) => ({ count: data.readUInt32BE(stts.start + 8 + 8 * i), delta: data.readUInt32BE(stts.start + 12 + 8 * i) }));
    const stsz = childBox(data, stbl, "stsz");
    const stsd = childBox(data, stbl, "stsd");
    // stsd: version/flags, entry count, then the sample entries; a visual sample entry's own boxes
    // start after its 78 bytes of fields (ISO/IEC 14496-12 12.1.3).
    const [entry] = boxesIn(data, stsd.start + 8, stsd.end);
    if (!entry) throw new Error("the video track has no sample entry");
    const widthPx = data.readUInt16BE(entry.start + 24);
    const heightPx = data.readUInt16BE(entry.start + 26);
    const config = boxesIn(data, entry.start + 78, entry.end).find((b) => b.type === "avcC");
    return {
      codec: entry.type, widthPx, heightPx, samples: data.readUInt32BE(stsz.start + 8), timescale, deltas,
      decoderConfig: config ? data.toString("hex", config.start, config.end) : "",
    };
  }
  throw new Error("the file has no video track");
}

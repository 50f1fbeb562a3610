/**
 * Reading an MP4 back in tests, independently of the code that wrote it: a box reader written from
 * ISO/IEC 14496-12 for the video track's frame count, timescale and sample durations, and the
 * ffmpeg binary for what a player sees (the stream's codec and pixel format, every frame decoded).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";

interface Box {
  type: string;
  start: number;
  end: number;
}

function boxes(data: Buffer, from: number, to: number): Box[] {
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
    if (size < header || at + size > to) throw new Error(`bad MP4 box ${type} of ${size} bytes at ${at}`);
    found.push({ type, start: at + header, end: at + size });
    at += size;
  }
  return found;
}

function child(data: Buffer, parent: Box, type: string): Box {
  const box = boxes(data, parent.start, parent.end).find((b) => b.type === type);
  if (!box) throw new Error(`MP4 box ${parent.type} has no ${type}`);
  return box;
}

/** The video track's sample count (stsz), timescale (mdhd) and sample durations (stts), and whether moov comes before mdat. */
export function videoTrack(path: string): { samples: number; timescale: number; deltas: Array<{ count: number; delta: number }>; moovFirst: boolean } {
  const data = readFileSync(path);
  const top = boxes(data, 0, data.length);
  const moov = top.find((b) => b.type === "moov");
  if (!moov) throw new Error(`${path} has no moov box`);
  const moovFirst = top.findIndex((b) => b.type === "moov") < top.findIndex((b) => b.type === "mdat");
  for (const trak of boxes(data, moov.start, moov.end).filter((b) => b.type === "trak")) {
    const mdia = child(data, trak, "mdia");
    const hdlr = child(data, mdia, "hdlr");
    if (data.toString("latin1", hdlr.start + 8, hdlr.start + 12) !== "vide") continue;
    const mdhd = child(data, mdia, "mdhd");
    const timescale = data.readUInt8(mdhd.start) === 1 ? data.readUInt32BE(mdhd.start + 20) : data.readUInt32BE(mdhd.start + 12);
    const stbl = child(data, child(data, mdia, "minf"), "stbl");
    const stsz = child(data, stbl, "stsz");
    const stts = child(data, stbl, "stts");
    const entries = data.readUInt32BE(stts.start + 4);
    const deltas = Array.from({ length: entries }, (_, i) => ({ count: data.readUInt32BE(stts.start + 8 + 8 * i), delta: data.readUInt32BE(stts.start + 12 + 8 * i) }));
    return { samples: data.readUInt32BE(stsz.start + 8), timescale, deltas, moovFirst };
  }
  throw new Error(`${path} has no video track`);
}

/** What ffmpeg says of the file's video stream (codec, pixel format) and how many frames it decodes. */
export function probeVideo(path: string): { codec: string; pixFmt: string; width: number; height: number; decodedFrames: number } {
  const result = spawnSync(ffmpegInstaller.path, ["-hide_banner", "-i", path, "-map", "0:v:0", "-f", "framecrc", "-"], { maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, result.stderr.toString());
  const stream = /Stream #0:0.*?: Video: (\w+)[^,]*, (\w+)(?:\([^)]*\))?, (\d+)x(\d+)/.exec(result.stderr.toString());
  assert.ok(stream, `ffmpeg shows no video stream in ${path}: ${result.stderr.toString().slice(0, 500)}`);
  const decodedFrames = result.stdout.toString().split("\n").filter((line) => line.length > 0 && !line.startsWith("#")).length;
  return { codec: stream[1]!, pixFmt: stream[2]!, width: Number(stream[3]), height: Number(stream[4]), decodedFrames };
}

/** The checksum of every decoded frame, in order (ffmpeg's framecrc): equal lists mean the same pictures. */
export function frameChecksums(path: string): string[] {
  const result = spawnSync(ffmpegInstaller.path, ["-v", "error", "-i", path, "-map", "0:v:0", "-f", "framecrc", "-"], { maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, result.stderr.toString());
  return result.stdout.toString().split("\n").filter((line) => line.length > 0 && !line.startsWith("#")).map((line) => line.split(",").at(-1)!.trim());
}

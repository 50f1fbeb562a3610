/**
 * Benchmark: the agent's episode recording (`McapRecorder`: JSON joint states, protobuf camera
 * frames, 1 MiB zstd chunks, summary, fsync, rename) against raw file writes of the same message
 * bytes (256 KiB writes, fsync). The load is a typical episode's: joint states at 100 Hz and two
 * camera JPEG streams at 30 Hz, until TOTAL_MB of payload. Figures: MB/s of each (payload MB over
 * wall time, fsync included) and their ratio (MCAP / raw), and the same for the recorder with
 * compression off (the writer's own cost: framing, indexes, CRCs). The recorder compresses on the
 * agent's long-lived worker, started before the clock as the agent starts it once;
 * `mcap_own_worker_vs_raw` is a recorder that starts its own worker (what every episode paid before:
 * half a second to a second on a loaded machine). Every "JPEG" is the same 32 KiB of random bytes,
 * so zstd finds each frame again in the chunk and writes little (a real episode's chunks compress to
 * about 0.5 and take zstd several times longer; see ZSTD_LEVEL).
 *
 * `..._cpu_vs_raw`: the same comparison in CPU time (the process's, worker thread included), steadier
 * than wall time on a loaded machine. NOTE: a CPU ratio above 1 with a wall ratio near 1 is the
 * worker's compression running on the second core.
 *
 * Measured as an agent records: warm. One untimed round first (the recorder's code path is much
 * larger than the raw loop's, and a cold first run spent a large part of its 0.2-0.6 s compiling it,
 * which an agent pays once, not per episode), then ROUNDS rounds, each writing raw, then the recorder
 * variants, to fresh files (the previous round's removed off the clock, so no run pays for
 * truncating or unlinking another's 64 MB). Ratios are medians of each round's ratio (its runs share
 * the machine's load of that moment); MB/s are medians.
 *
 * Run alone: npx tsx scripts/bench/mcap-throughput.ts [MB] (one JSON line per figure).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { CameraFrame, JointState } from "../../cell-agent/hardware/types.js";
import { encodeCompressedImage } from "../../protocol/recording/foxglove-protobuf.js";
import { McapRecorder } from "../../cell-agent/recording/mcap-recorder.js";
import { startChunkCompressor, type ChunkCompressor } from "../../cell-agent/recording/chunk-compressor.js";
import type { Figure } from "../bench.js";
import { quantile, round } from "./quantiles.js";

const BENCH = "mcap-throughput";
const JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"];
const CAMERAS = ["top", "wrist"];
/** A 640x480 JPEG of a tabletop is typically 25-40 KB. */
const JPEG_BYTES = 32 * 1024;
const RAW_CHUNK = 256 * 1024;
/** Timed rounds after the untimed warm-up round. */
const ROUNDS = 5;

type Message = { kind: "joints"; tNs: bigint; state: JointState } | { kind: "camera"; tNs: bigint; name: string; frame: CameraFrame };

/** A deterministic episode's messages in log-time order, until about `totalBytes` of payload. */
function* episodeMessages(totalBytes: number): Generator<Message> {
  const jpeg = new Uint8Array(JPEG_BYTES);
  let seed = 12345;
  for (let i = 0; i < jpeg.length; i++) jpeg[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
  let bytes = 0;
  for (let step = 0; bytes < totalBytes; step++) {
    const tNs = BigInt(step) * 10_000_000n;
    const s = step / 100;
    const state: JointState = {
      tNs, positionRad: JOINTS.map((_, j) => Math.sin(s + j)), velocityRadS: JOINTS.map((_, j) => Math.cos(s + j)),
      currentA: JOINTS.map(() => 0.12), temperatureC: JOINTS.map(() => 36.5),
    };
    bytes += 300;
    yield { kind: "joints", tNs, state };
    // 30 Hz cameras on a 100 Hz loop: every 3rd or 4th step.
    if (Math.floor((step * 30) / 100) !== Math.floor(((step - 1) * 30) / 100)) {
      for (const name of CAMERAS) {
        bytes += JPEG_BYTES;
        yield { kind: "camera", tNs, name, frame: { tNs, width: 640, height: 480, jpeg } };
      }
    }
  }
}

/** The bytes McapRecorder puts in each message's data (JSON joint states, protobuf camera frames), for the raw baseline. */
function payloadOf(message: Message): Uint8Array {
  const stamp = (tNs: bigint) => ({ sec: Number(tNs / 1_000_000_000n), nsec: Number(tNs % 1_000_000_000n) });
  if (message.kind === "camera") return encodeCompressedImage({ timestamp: stamp(message.tNs), frameId: message.name, data: message.frame.jpeg, format: "jpeg" });
  const { state } = message;
  return new TextEncoder().encode(JSON.stringify({
    timestamp: stamp(message.tNs), name: JOINTS, position: state.positionRad, velocity: state.velocityRadS, effort: state.currentA, temperature_c: state.temperatureC,
  }));
}

/** `compressor`: the agent's long-lived zstd worker ("agent"), one the recorder starts itself ("own"), or none. */
async function writeMcap(dir: string, name: string, totalBytes: number, compress: { compressor: ChunkCompressor } | "own" | "none"): Promise<{ seconds: number; cpuS: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const recorder = await McapRecorder.create(dir, name, {
    jointNames: JOINTS, cameraNames: CAMERAS, compress: compress === "none" ? "none" : "worker", ...(typeof compress === "object" ? { compressor: compress.compressor } : {}),
  });
  let n = 0;
  for (const message of episodeMessages(totalBytes)) {
    if (message.kind === "joints") recorder.jointStates(message.tNs, message.state);
    else recorder.camera(message.tNs, message.name, message.frame);
    // Like the control loop: the recorder drains between steps instead of queueing the whole episode.
    if (++n % 64 === 0) await recorder.flush();
  }
  await recorder.finish(join(dir, `${name}.mcap`));
  return { seconds: (performance.now() - started) / 1000, cpuS: cpuSeconds(process.cpuUsage(cpu)) };
}

/** User + system CPU of the whole process, worker threads included. */
function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

async function writeRaw(dir: string, name: string, totalBytes: number): Promise<{ seconds: number; cpuS: number; payloadBytes: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const handle = await open(join(dir, `${name}.raw`), "w");
  let buffer = Buffer.alloc(RAW_CHUNK * 2);
  let used = 0;
  let payloadBytes = 0;
  for (const message of episodeMessages(totalBytes)) {
    const data = payloadOf(message);
    payloadBytes += data.byteLength;
    if (used + data.byteLength > buffer.length) buffer = Buffer.concat([buffer.subarray(0, used), Buffer.alloc(data.byteLength + RAW_CHUNK)]);
    buffer.set(data, used);
    used += data.byteLength;
    if (used >= RAW_CHUNK) {
      await handle.write(buffer, 0, used);
      used = 0;
    }
  }
  if (used) await handle.write(buffer, 0, used);
  await handle.sync();
  await handle.close();
  return { seconds: (performance.now() - started) / 1000, cpuS: cpuSeconds(process.cpuUsage(cpu)), payloadBytes };
}

export async function run(totalMb = 64): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-mcap-"));
  const clear = () => { for (const file of readdirSync(dir)) rmSync(join(dir, file)); };
  try {
    const totalBytes = totalMb * 1024 * 1024;
    // Started before the clock, as the agent starts its worker once, before any episode.
    const compressor = startChunkCompressor();
    await compressor.compress(new Uint8Array(1024));
    const rounds: Array<{ raw: Awaited<ReturnType<typeof writeRaw>>; mcap: Run; ownWorker: Run; uncompressed: Run }> = [];
    for (let round = 0; round <= ROUNDS; round++) {
      clear();
      const raw = await writeRaw(dir, "raw", totalBytes);
      const mcap = await writeMcap(dir, "agent", totalBytes, { compressor });
      const ownWorker = await writeMcap(dir, "own", totalBytes, "own");
      const uncompressed = await writeMcap(dir, "none", totalBytes, "none");
      // Round 0 warms the code paths up and is not counted.
      if (round > 0) rounds.push({ raw, mcap, ownWorker, uncompressed });
    }
    await compressor.close();
    const payloadBytes = rounds[0].raw.payloadBytes;
    // Every run wrote the same messages: rate each over the raw baseline's exact byte count.
    const mbps = (r: Run) => payloadBytes / 1024 / 1024 / r.seconds;
    const median = (values: number[]) => quantile(values, 0.5);
    const wall = (pick: (r: (typeof rounds)[number]) => Run) => median(rounds.map((r) => r.raw.seconds / pick(r).seconds));
    const cpu = (pick: (r: (typeof rounds)[number]) => Run) => median(rounds.map((r) => pick(r).cpuS / r.raw.cpuS));
    const figure = (metric: string, value: number, unit: string, digits = 3): Figure => ({ bench: BENCH, metric, value: round(value, digits), unit });
    return [
      figure("payload", payloadBytes / 1024 / 1024, "MB", 1),
      figure("rounds", rounds.length, "count", 0),
      figure("mcap_recorder", median(rounds.map((r) => mbps(r.mcap))), "MB/s", 1),
      figure("raw_fs_write", median(rounds.map((r) => mbps(r.raw))), "MB/s", 1),
      figure("mcap_vs_raw", wall((r) => r.mcap), "ratio"),
      figure("mcap_cpu_vs_raw", cpu((r) => r.mcap), "ratio"),
      figure("mcap_own_worker_vs_raw", wall((r) => r.ownWorker), "ratio"),
      figure("mcap_uncompressed_recorder", median(rounds.map((r) => mbps(r.uncompressed))), "MB/s", 1),
      figure("mcap_uncompressed_vs_raw", wall((r) => r.uncompressed), "ratio"),
      figure("mcap_uncompressed_cpu_vs_raw", cpu((r) => r.uncompressed), "ratio"),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Run = { seconds: number; cpuS: number };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 64))) console.log(JSON.stringify(figure));
}

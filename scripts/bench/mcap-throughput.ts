/**
 * Benchmark: the agent's episode recording (`McapRecorder`: JSON joint states, protobuf camera
 * frames, 1 MiB zstd chunks, summary, fsync, rename) against raw file writes of the same message
 * bytes (256 KiB writes, fsync). The load is a typical episode's: joint states at 100 Hz and two
 * camera JPEG streams at 30 Hz, until TOTAL_MB of payload. Figures: MB/s of each (payload MB over
 * wall time, fsync included) and their ratio (MCAP / raw), the compressed file's size over the payload's, and the same for the recorder with
 * compression off (the writer's own cost: framing, indexes, CRCs). The recorder compresses on the
 * agent's long-lived worker, started before the clock as the agent starts it once;
 * `mcap_own_worker_vs_raw` is a recorder that starts its own worker (what every episode paid before:
 * half a second to a second on a loaded machine).
 *
 * The "JPEGs" compress like a real episode's: each camera's frame keeps half of the previous frame's
 * 512-byte blocks (a mostly still scene) and the rest is fresh pseudo-random bytes, so a 1 MiB chunk
 * compresses to about 0.52 at ZSTD_LEVEL (a README episode's chunks: 0.547). They are generated
 * before the clock, 64 per camera in a cycle longer than a chunk. Before, every frame was the same
 * 32 KiB, of bytes from an LCG whose products overflowed doubles and repeated: the recording was
 * 1.1 MB for 64.7 MB of payload (0.017), so zstd had nearly nothing to do and the recorder fsynced a
 * sixtieth of the bytes the raw baseline did, and the ratio flattered the recorder.
 *
 * `..._cpu_vs_raw`: the same comparison in CPU time (the process's, worker thread included), steadier
 * than wall time on a loaded machine. NOTE: a CPU ratio above 1 with a wall ratio near 1 is the
 * worker's compression running on the second core. `mcap_main_thread_cpu_vs_raw`: the main thread's
 * CPU alone (the thread an agent's control loop runs on), from /proc (Linux; 10 ms ticks, summed
 * over the rounds), against the raw writer's main thread; the rest of either process's CPU is the
 * zstd worker, libuv's file-system threads and V8's GC helpers.
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
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
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

/** Frames per camera in the cycle: longer than the 16 a 1 MiB chunk holds, so no chunk sees a frame twice. */
const FRAME_CYCLE = 64;
/** The share of a frame's 512-byte blocks that differ from the camera's previous frame. */
const FRESH_BLOCKS = 0.5;
const BLOCK = 512;

/** Each camera's FRAME_CYCLE deterministic frames (see the header: they compress like real ones). */
function cameraFrames(): Map<string, Uint8Array[]> {
  let seed = 12345;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  const frames = new Map<string, Uint8Array[]>();
  for (const name of CAMERAS) {
    let previous = new Uint8Array(JPEG_BYTES).map(next);
    const cycle: Uint8Array[] = [];
    for (let k = 0; k < FRAME_CYCLE; k++) {
      const frame = new Uint8Array(JPEG_BYTES);
      for (let at = 0; at < JPEG_BYTES; at += BLOCK) {
        if (next() / 256 < FRESH_BLOCKS) for (let i = at; i < at + BLOCK; i++) frame[i] = next();
        else frame.set(previous.subarray(at, at + BLOCK), at);
      }
      cycle.push(frame);
      previous = frame;
    }
    frames.set(name, cycle);
  }
  return frames;
}

/** A deterministic episode's messages in log-time order, until about `totalBytes` of payload. */
function* episodeMessages(totalBytes: number, frames: ReadonlyMap<string, readonly Uint8Array[]>): Generator<Message> {
  let bytes = 0;
  let shot = 0;
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
        yield { kind: "camera", tNs, name, frame: { tNs, width: 640, height: 480, jpeg: frames.get(name)![shot % FRAME_CYCLE] } };
      }
      shot++;
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
async function writeMcap(dir: string, name: string, load: Load, compress: { compressor: ChunkCompressor } | "own" | "none"): Promise<Run & { fileBytes: number }> {
  const cpu = process.cpuUsage();
  const mainCpu = mainThreadCpuS();
  const started = performance.now();
  const recorder = await McapRecorder.create(dir, name, {
    jointNames: JOINTS, cameraNames: CAMERAS, compress: compress === "none" ? "none" : "worker", ...(typeof compress === "object" ? { compressor: compress.compressor } : {}),
  });
  let n = 0;
  for (const message of episodeMessages(load.totalBytes, load.frames)) {
    if (message.kind === "joints") recorder.jointStates(message.tNs, message.state);
    else recorder.camera(message.tNs, message.name, message.frame);
    // Like the control loop: the recorder drains between steps instead of queueing the whole episode.
    if (++n % 64 === 0) await recorder.flush();
  }
  await recorder.finish(join(dir, `${name}.mcap`));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, cpuS: cpuSeconds(process.cpuUsage(cpu)), mainCpuS: mainThreadCpuS() - mainCpu, fileBytes: statSync(join(dir, `${name}.mcap`)).size };
}

/** User + system CPU of this process's main thread, from /proc (NaN where there is none). */
function mainThreadCpuS(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields after the command: state is index 0, so utime (field 14) is index 11 and stime index 12; 100 ticks a second.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU of the whole process, worker threads included. */
function cpuSeconds(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

async function writeRaw(dir: string, name: string, load: Load): Promise<Run & { payloadBytes: number }> {
  const cpu = process.cpuUsage();
  const mainCpu = mainThreadCpuS();
  const started = performance.now();
  const handle = await open(join(dir, `${name}.raw`), "w");
  let buffer = Buffer.alloc(RAW_CHUNK * 2);
  let used = 0;
  let payloadBytes = 0;
  for (const message of episodeMessages(load.totalBytes, load.frames)) {
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
  return { seconds: (performance.now() - started) / 1000, cpuS: cpuSeconds(process.cpuUsage(cpu)), mainCpuS: mainThreadCpuS() - mainCpu, payloadBytes };
}

export async function run(totalMb = 64): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-mcap-"));
  const clear = () => { for (const file of readdirSync(dir)) rmSync(join(dir, file)); };
  try {
    const load: Load = { totalBytes: totalMb * 1024 * 1024, frames: cameraFrames() };
    // Started before the clock, as the agent starts its worker once, before any episode.
    const compressor = startChunkCompressor();
    await compressor.compress(new Uint8Array(1024));
    const rounds: Array<{ raw: Awaited<ReturnType<typeof writeRaw>>; mcap: Run & { fileBytes: number }; ownWorker: Run; uncompressed: Run }> = [];
    for (let round = 0; round <= ROUNDS; round++) {
      clear();
      const raw = await writeRaw(dir, "raw", load);
      const mcap = await writeMcap(dir, "agent", load, { compressor });
      const ownWorker = await writeMcap(dir, "own", load, "own");
      const uncompressed = await writeMcap(dir, "none", load, "none");
      // Round 0 warms the code paths up and is not counted.
      if (round > 0) rounds.push({ raw, mcap, ownWorker, uncompressed });
    }
    await compressor.close();
    const payloadBytes = rounds[0].raw.payloadBytes;
    // Every run wrote the same messages: rate each over the raw baseline's exact byte count.
    const mbps = (r: Run) => payloadBytes / 1024 / 1024 / r.seconds;
    const median = (values: number[]) => quantile(values, 0.5);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const wall = (pick: (r: (typeof rounds)[number]) => Run) => median(rounds.map((r) => r.raw.seconds / pick(r).seconds));
    const cpu = (pick: (r: (typeof rounds)[number]) => Run) => median(rounds.map((r) => pick(r).cpuS / r.raw.cpuS));
    const figure = (metric: string, value: number, unit: string, digits = 3): Figure => ({ bench: BENCH, metric, value: round(value, digits), unit });
    return [
      figure("payload", payloadBytes / 1024 / 1024, "MB", 1),
      figure("rounds", rounds.length, "count", 0),
      figure("mcap_file_vs_payload", rounds[0].mcap.fileBytes / payloadBytes, "ratio"),
      figure("mcap_recorder", median(rounds.map((r) => mbps(r.mcap))), "MB/s", 1),
      figure("raw_fs_write", median(rounds.map((r) => mbps(r.raw))), "MB/s", 1),
      figure("mcap_vs_raw", wall((r) => r.mcap), "ratio"),
      figure("mcap_cpu_vs_raw", cpu((r) => r.mcap), "ratio"),
      // Summed over the rounds: one round's main thread is a few 10 ms ticks.
      figure("mcap_main_thread_cpu_vs_raw", sum(rounds.map((r) => r.mcap.mainCpuS)) / sum(rounds.map((r) => r.raw.mainCpuS)), "ratio"),
      figure("mcap_own_worker_vs_raw", wall((r) => r.ownWorker), "ratio"),
      figure("mcap_uncompressed_recorder", median(rounds.map((r) => mbps(r.uncompressed))), "MB/s", 1),
      figure("mcap_uncompressed_vs_raw", wall((r) => r.uncompressed), "ratio"),
      figure("mcap_uncompressed_cpu_vs_raw", cpu((r) => r.uncompressed), "ratio"),
      figure("mcap_uncompressed_main_thread_cpu_vs_raw", sum(rounds.map((r) => r.uncompressed.mainCpuS)) / sum(rounds.map((r) => r.raw.mainCpuS)), "ratio"),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Run = { seconds: number; cpuS: number; mainCpuS: number };
/** What every run writes: messages until `totalBytes` of payload, with these camera frames. */
type Load = { totalBytes: number; frames: ReadonlyMap<string, readonly Uint8Array[]> };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 64))) console.log(JSON.stringify(figure));
}

/**
 * Benchmark: what the simulated cameras cost a cell. One scripted pick on the kinematic world
 * (approach, descend, close, lift, hold: 7 simulated seconds) with the tabletop cameras, top and
 * wrist, captured at 30 Hz as the episode runner does; every frame's JPEG is taken, since the
 * recorder stores every JPEG, and the top camera's frames go through the episode video encoder
 * (ffmpeg, a child process), as in an episode.
 *
 * Figures, per camera and for the cell: CPU ms per simulated second (this process, every thread,
 * so libvips' encoder threads count), CPU ms per frame, JPEG bytes per frame, and the video's CPU
 * ms per simulated second: ffmpeg's, this process's own part (the encoder's addFrame and finish:
 * the RGB to yuv420p conversion and the pipe), their sum, and the bitrate. The video is made twice
 * in the same run, as a cell makes it (input `auto`: the simulated camera's raw pixels as yuv420p)
 * and from the JPEGs (`jpeg_input_*`, as a real camera's, and as every camera's before), so the
 * two compare under the same load. Physics stepping is not counted. And what a reference policy pays to
 * see a frame: CPU ms per decoded frame of each camera, libjpeg-turbo's and jpeg-js's, and their ratio.
 *
 * Run alone: npx tsx scripts/bench/render.ts [simulated seconds, default 7]
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { CameraFrame, ResetPlan } from "../../cell-agent/hardware/types.js";
import { VideoEncoder, type VideoInput } from "../../cell-agent/recording/video-encoder.js";
import { SceneFaces } from "../../simulators/render/scene-faces.js";
import { SimCamera } from "../../simulators/devices/sim-camera.js";
import { decodeJpeg, decodeJpegInJavaScript } from "../../simulators/render/jpeg-codec.js";
import { jointsOf } from "../../simulators/world/embodiments.js";
import { inverseKinematics } from "../../simulators/world/kinematics.js";
import { SimWorld } from "../../simulators/world/sim-world.js";
import type { Figure } from "../bench.js";
import { round } from "./quantiles.js";

const BENCH = "render";
const RATE_HZ = 30;
const CAMERAS = ["top", "wrist"];

const PLAN: ResetPlan = {
  objects: { cube: { object: "cube", positionM: [0.23, -0.03, 0.015], yawRad: 0.35 } },
  lighting: "nominal",
  distractors: [
    { object: "block-blue", positionM: [0.17, 0.07, 0.015], yawRad: 0.2 },
    { object: "mug", positionM: [0.33, 0.06, 0.045], yawRad: 0 },
    { object: "stapler", positionM: [0.3, -0.09, 0.02], yawRad: 1.1 },
  ],
  homeRad: new Array(6).fill(0),
};

/** Fingertip waypoints of the scripted pick: [start s, x, y, z, opening]. */
const SCRIPT: Array<[number, number, number, number, number]> = [
  [0, 0.23, -0.03, 0.08, 1],
  [2.0, 0.23, -0.03, 0.016, 1],
  [3.6, 0.23, -0.03, 0.016, 0],
  [4.4, 0.23, -0.03, 0.12, 0],
];

/** The scripted arm vector and opening at time tS (positions blended linearly; the servos smooth the rest). */
function scriptAt(tS: number): { arm: number[]; opening: number } {
  let k = 0;
  while (k + 1 < SCRIPT.length && SCRIPT[k + 1][0] <= tS) k++;
  const [t0, x0, y0, z0, opening] = SCRIPT[k];
  const [t1, x1, y1, z1] = SCRIPT[Math.min(k + 1, SCRIPT.length - 1)];
  const s = t1 > t0 ? Math.min(1, (tS - t0) / (t1 - t0)) : 1;
  const arm = inverseKinematics([x0 + (x1 - x0) * s, y0 + (y1 - y0) * s, z0 + (z1 - z0) * s], 0.35) ?? [0, 0, 0, 0, 0];
  return { arm, opening };
}

/** CPU time of this process (all threads), ms. */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU time of this process's reaped children (ffmpeg), ms, from /proc/self/stat (cutime + cstime). */
function childCpuMs(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields after the command: state is index 0, so cutime (field 16) is index 13 and cstime index 14.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

export interface RenderBenchResult {
  simulatedS: number;
  frames: Record<string, number>;
  cpuMs: Record<string, number>;
  jpegBytes: Record<string, number>;
  /** ffmpeg's CPU. */
  videoCpuMs: number;
  /** This process's CPU inside the video encoder (addFrame, finish). */
  videoAgentCpuMs: number;
  videoBytes: number;
  videoInput: VideoInput;
  size: Record<string, string>;
}

/** Runs the scripted pick and measures the cameras; `onFrame` sees every frame (for screenshots). */
export async function measureCameras(simulatedS = 7, onFrame?: (camera: string, tS: number, frame: CameraFrame) => Promise<void>, videoInput: VideoInput = "auto"): Promise<RenderBenchResult> {
  const world = new SimWorld({ model: "so101", seed: 3, engine: "kinematic" });
  world.resetScene(PLAN);
  const sceneFaces = new SceneFaces();
  const cameras = CAMERAS.map((name) => new SimCamera(world, name, RATE_HZ, { sceneFaces }));
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-render-"));
  const video = new VideoEncoder(join(dir, "top.mp4"), RATE_HZ, { input: videoInput });
  const result: RenderBenchResult = { simulatedS, frames: {}, cpuMs: {}, jpegBytes: {}, videoCpuMs: 0, videoAgentCpuMs: 0, videoBytes: 0, videoInput, size: {} };
  for (const name of CAMERAS) {
    result.frames[name] = 0;
    result.cpuMs[name] = 0;
    result.jpegBytes[name] = 0;
  }
  try {
    const periodNs = BigInt(Math.round(1e9 / RATE_HZ));
    const startNs = world.tNs;
    const childStart = childCpuMs();
    for (let step = 0; step < simulatedS * RATE_HZ; step++) {
      const tS = step / RATE_HZ;
      const { arm, opening } = scriptAt(tS);
      world.setGoals(jointsOf(world.embodiment, arm, opening));
      world.advanceTo(startNs + BigInt(step) * periodNs);
      for (const camera of cameras) {
        const before = cpuMs();
        const frame = await camera.capture();
        const bytes = frame.jpeg.byteLength;
        result.cpuMs[camera.name] += cpuMs() - before;
        result.frames[camera.name]++;
        result.jpegBytes[camera.name] += bytes;
        result.size[camera.name] = `${frame.width}x${frame.height}`;
        if (camera.name === "top") {
          const beforeVideo = cpuMs();
          await video.addFrame(frame);
          result.videoAgentCpuMs += cpuMs() - beforeVideo;
        }
        if (onFrame) await onFrame(camera.name, tS, frame);
      }
    }
    const beforeFinish = cpuMs();
    await video.finish();
    result.videoAgentCpuMs += cpuMs() - beforeFinish;
    result.videoInput = video.inputFormat;
    result.videoCpuMs = childCpuMs() - childStart;
    result.videoBytes = statSync(join(dir, "top.mp4")).size;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

/**
 * CPU ms per decoded frame of each camera, as the reference policies decode what they see: `decodeJpeg`
 * (libjpeg-turbo) and jpeg-js (its fallback, what they used before), each warmed up on the same frames first.
 */
function decodeFigures(frames: Record<string, Uint8Array[]>): Figure[] {
  const perFrame = (decode: (jpeg: Uint8Array) => unknown, jpegs: Uint8Array[]): number => {
    for (const jpeg of jpegs) decode(jpeg);
    const before = cpuMs();
    for (const jpeg of jpegs) decode(jpeg);
    return (cpuMs() - before) / jpegs.length;
  };
  return Object.entries(frames).flatMap(([name, jpegs]) => {
    const native = perFrame(decodeJpeg, jpegs);
    const js = perFrame(decodeJpegInJavaScript, jpegs);
    return [
      { bench: BENCH, metric: `${name}_decode_cpu_per_frame`, value: round(native, 2), unit: "ms" },
      { bench: BENCH, metric: `${name}_decode_jpeg_js_cpu_per_frame`, value: round(js, 2), unit: "ms" },
      { bench: BENCH, metric: `${name}_decode_jpeg_js_over_native`, value: round(js / native, 1), unit: "ratio" },
    ];
  });
}

export async function run(simulatedS = 7): Promise<Figure[]> {
  // Warm up (JIT, encoder tables, ffmpeg's first start), keeping the frames for the decoding figures.
  const decodable: Record<string, Uint8Array[]> = Object.fromEntries(CAMERAS.map((name) => [name, []]));
  await measureCameras(1, async (camera, _tS, frame) => void decodable[camera]!.push(frame.jpeg));
  const r = await measureCameras(simulatedS);
  const fromJpeg = await measureCameras(simulatedS, undefined, "jpeg");
  const figures: Figure[] = [];
  let total = 0;
  for (const name of CAMERAS) {
    total += r.cpuMs[name];
    figures.push(
      { bench: BENCH, metric: `${name}_${r.size[name]}_cpu_per_sim_s`, value: round(r.cpuMs[name] / r.simulatedS, 1), unit: "ms" },
      { bench: BENCH, metric: `${name}_cpu_per_frame`, value: round(r.cpuMs[name] / r.frames[name], 2), unit: "ms" },
      { bench: BENCH, metric: `${name}_jpeg_per_frame`, value: round(r.jpegBytes[name] / r.frames[name] / 1024, 1), unit: "KiB" },
    );
  }
  const videoFigures = (prefix: string, v: RenderBenchResult): Figure[] => [
    { bench: BENCH, metric: `${prefix}video_ffmpeg_cpu_per_sim_s`, value: round(v.videoCpuMs / v.simulatedS, 1), unit: "ms" },
    { bench: BENCH, metric: `${prefix}video_agent_cpu_per_sim_s`, value: round(v.videoAgentCpuMs / v.simulatedS, 1), unit: "ms" },
    { bench: BENCH, metric: `${prefix}video_cpu_per_sim_s`, value: round((v.videoCpuMs + v.videoAgentCpuMs) / v.simulatedS, 1), unit: "ms" },
    { bench: BENCH, metric: `${prefix}video_bitrate`, value: round((v.videoBytes * 8) / v.simulatedS / 1000, 0), unit: "kb/s" },
  ];
  figures.push(
    { bench: BENCH, metric: "cameras_cpu_per_sim_s", value: round(total / r.simulatedS, 1), unit: "ms" },
    { bench: BENCH, metric: `video_input_${r.videoInput}`, value: 1, unit: "count" },
    ...videoFigures("", r),
    ...videoFigures("jpeg_input_", fromJpeg),
    { bench: BENCH, metric: "cell_cpu_per_sim_s", value: round((total + r.videoCpuMs + r.videoAgentCpuMs) / r.simulatedS, 1), unit: "ms" },
    ...decodeFigures(decodable),
  );
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 7))) console.log(JSON.stringify(figure));
}

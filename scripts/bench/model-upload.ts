/**
 * Model uploads against a coordinator in its own process (coordinator-process.ts): a large model
 * (weights in one initializer) and the shape bomb of issue 24, each sent in Content-Range chunks.
 * Prints the time from the last chunk sent to the answer, the coordinator's peak RSS growth over its
 * idle RSS (/proc/<pid>/status VmHWM - VmRSS before; it should not grow with the file), and the
 * slowest GET /v1/robots answered while each upload ran.
 *
 *   npm run bench -- model-upload        (ASSAY_BENCH_MODEL_MB: the large model's size, default 512)
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { paddedModel, shapeBombModel } from "../../test/support/onnx-models.js";
import type { Figure } from "../bench.js";
import { startCoordinatorProcess, type CoordinatorProcess } from "./coordinator-process.js";

const BENCH = "model-upload";
const KEY = "asy_live_BenchAdminKey0123456789abcdefgh";
const MB = 1024 ** 2;
const CHUNK_BYTES = 64 * MB;

/** prom-client's nodejs_eventloop_lag_max_seconds, in ms: the longest loop delay since the previous scrape (each scrape resets it). */
async function loopLagMaxMs(coordinator: CoordinatorProcess): Promise<number> {
  const text = await (await fetch(`${coordinator.baseUrl}/metrics`)).text();
  return 1000 * Number(/^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(text)?.[1] ?? NaN);
}

function memoryKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? NaN);
}

async function upload(coordinator: CoordinatorProcess, name: string, bytes: Uint8Array): Promise<{ answerMs: number; status: number; slowestProbeMs: number }> {
  const headers = { authorization: `Bearer ${KEY}` };
  const declared = await fetch(`${coordinator.baseUrl}/v1/models`, {
    method: "POST", headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ name, format: "onnx", bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }),
  });
  const model = (await declared.json()) as { id: string };
  let done = false;
  let slowestProbeMs = 0;
  const probing = (async () => {
    for (let i = 0; !done && i < 100_000; i++) {
      const started = performance.now();
      await (await fetch(`${coordinator.baseUrl}/v1/robots`, { headers })).arrayBuffer();
      slowestProbeMs = Math.max(slowestProbeMs, performance.now() - started);
    }
  })();
  let answerMs = 0;
  let status = 0;
  for (let first = 0; first < bytes.length; first += CHUNK_BYTES) {
    const last = Math.min(first + CHUNK_BYTES, bytes.length) - 1;
    const started = performance.now();
    const res = await fetch(`${coordinator.baseUrl}/v1/models/${model.id}/content`, {
      method: "PUT", headers: { ...headers, "content-type": "application/octet-stream", "content-range": `bytes ${first}-${last}/${bytes.length}` },
      body: bytes.subarray(first, last + 1) as Uint8Array<ArrayBuffer>,
    });
    await res.arrayBuffer();
    answerMs = performance.now() - started;
    status = res.status;
  }
  done = true;
  await probing;
  return { answerMs, status, slowestProbeMs };
}

export async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const figure = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric, value: Math.round(value * 10) / 10, unit });
  const root = mkdtempSync(join(tmpdir(), "assay-bench-models-"));
  const modelMb = Number(process.env.ASSAY_BENCH_MODEL_MB ?? 512);
  const coordinator = await startCoordinatorProcess("models", {
    port: 0, grpcPort: 0, dataDir: root, apiKey: KEY, rateLimits: { general: { perS: 1e9, burst: 1e9 }, submit: { perS: 1e9, burst: 1e9 } },
  });
  try {
    for (const [name, bytes] of [["large", paddedModel(modelMb * MB)], ["bomb", shapeBombModel(12_000_000)]] as const) {
      const idleKb = memoryKb(coordinator.pid, "VmRSS");
      await loopLagMaxMs(coordinator);
      const result = await upload(coordinator, `bench/${name}`, bytes);
      figure(`${name}_file`, bytes.length / MB, "MB");
      figure(`${name}_last_chunk_answer_${result.status}`, result.answerMs, "ms");
      figure(`${name}_rss_growth`, (memoryKb(coordinator.pid, "VmHWM") - idleKb) / 1024, "MB");
      figure(`${name}_slowest_probe`, result.slowestProbeMs, "ms");
      figure(`${name}_coordinator_loop_lag_max`, await loopLagMaxMs(coordinator), "ms");
    }
  } finally {
    await coordinator.stop();
    rmSync(root, { recursive: true, force: true });
  }
  return figures;
}

/**
 * Shared pieces of the cross-process tests: a temp data dir, a coordinator on port 0 with a simulated
 * fleet of real cell-agent processes, an authenticated fetch, and the wait for a run's end.
 */
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import type { RateLimits } from "../../coordinator/api/rate-limit.js";
import type { ConnectionOptions } from "../../coordinator/api/connection-guard.js";
import type { S3Connection } from "../../coordinator/storage/store-from-url.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { launchSimFleet, type SimFleet } from "../../simulators/fleet/launcher.js";
import type { SimEngine } from "../../simulators/physics/engine.js";
import type { SimResetMode } from "../../simulators/sim-cell.js";
import { waitForRunEnd, type RunEnd, type RunEndOptions } from "../support/run-end.js";
import { testStoreOptions } from "../support/test-database.js";

export { readSse, type SseEvent } from "../support/sse.js";
export { waitForRunEnd, type RunEnd } from "../support/run-end.js";

export const TEST_ADMIN_KEY = "asy_live_TestAdminKey0123456789abcdef";

/**
 * The tests' default request allowance. The suite's probes poll the API every 20-50 ms from one account
 * (test/support/eventually.ts), beyond the coordinator's default of 20 requests/s per account; a test about
 * rate limits states the limits it tests (scopes.spec.ts, hostile-http.spec.ts, test/unit/rate-limit.spec.ts).
 */
export const TEST_RATE_LIMITS: Partial<RateLimits> = { general: { perS: 10_000, burst: 10_000 }, submit: { perS: 10_000, burst: 10_000 }, rejectedKeys: { perS: 10_000, burst: 10_000 } };

export interface TestService {
  coordinator: RunningCoordinator;
  fleet?: SimFleet;
  dataDir: string;
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * `cells`: which installed cells to simulate (none: coordinator only). `simSpeed`: simulated seconds
 * per wall second (default unpaced); fault tests slow it so an episode lasts long enough to hit.
 * `simTimecode`: cameras burn in their capture time (benches). `rateLimits`: per-key limits (default TEST_RATE_LIMITS).
 * `simEngine`: the cells' physics engine (default MuJoCo); `simCellVariation`: the per-cell variation scale
 * (simulators/world/cell-variation.ts; default none). `connections`: connection timeouts and the per-address cap
 * (default the coordinator's). `modelMirror`: the operator's local model mirror directory. `artifactsUrl` and `s3`: artifacts in a
 * bucket (test/support/s3-server.ts) instead of the data dir. `simResets`: "operator" puts the cells in operator reset
 * mode (each reset waits for POST /v1/cells/{cell}/scene-ready; default "self"); `simLabelTimeoutS` is how long such a
 * cell waits for a success label before the episode is unlabelled (default 600). `simWithout`: per cell, instrument
 * kinds it lacks although its environment lists them (a lab without mocap: `{ "so101-b": ["mocap"] }`).
 * The fleet (`service.fleet`) can kill, restart, unplug and plug its cells, and switch instruments off.
 */
export async function startTestService(options: {
  cells?: string[]; keepDataDir?: string; simSpeed?: number; simTimecode?: boolean; simWithout?: Record<string, string[]>; simEngine?: SimEngine; simCellVariation?: number; rateLimits?: Partial<RateLimits>; modelMirror?: string; artifactsUrl?: string; s3?: S3Connection;
  connections?: Partial<ConnectionOptions>; simResets?: SimResetMode; simLabelTimeoutS?: number; attentionPageMs?: number;
  recordingWaitMs?: number; runCompletionSweepMs?: number;
} = {}): Promise<TestService> {
  const dataDir = options.keepDataDir ?? mkdtempSync(join(tmpdir(), "assay-it-"));
  const coordinator = await startCoordinator(compileCoordinatorOptions({
    port: 0, grpcPort: 0, dataDir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dataDir)), rateLimits: options.rateLimits ?? TEST_RATE_LIMITS,
    ...(options.modelMirror ? { modelMirror: options.modelMirror } : {}),
    ...(options.connections ? { connections: options.connections } : {}),
    ...(options.attentionPageMs ? { attentionPageMs: options.attentionPageMs } : {}),
    ...(options.recordingWaitMs ? { recordingWaitMs: options.recordingWaitMs } : {}),
    ...(options.runCompletionSweepMs ? { runCompletionSweepMs: options.runCompletionSweepMs } : {}),
    ...(options.artifactsUrl ? { artifactsUrl: options.artifactsUrl, s3: options.s3 } : {}),
    // The tests' webhook receivers listen on loopback (test/integration/webhook-receiver.ts).
    webhooksAllowLoopback: true,
  }));
  let fleet: SimFleet | undefined;
  if (options.cells && options.cells.length > 0) {
    const wanted = new Set(options.cells);
    const cells = loadFirmwarePins().installations.filter((i) => wanted.has(i.cell)).map((i) => ({ ...i, without: options.simWithout?.[i.cell] }));
    fleet = await launchSimFleet({
      cells,
      coordinatorAddress: coordinator.grpcAddress,
      enroll: (cellId, model) => coordinator.enrollCell(cellId, model),
      dataDir: join(dataDir, "cells"),
      speed: options.simSpeed ?? Number.POSITIVE_INFINITY,
      seed: 7,
      timecode: options.simTimecode,
      engine: options.simEngine,
      cellVariation: options.simCellVariation,
      resets: options.simResets,
      labelTimeoutS: options.simLabelTimeoutS,
      log: process.env.ASSAY_TEST_LOG ? (line) => console.log(line) : undefined,
    });
  }
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TEST_ADMIN_KEY}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(init.json);
    }
    return fetch(new URL(path, coordinator.baseUrl), { ...init, headers, body });
  };
  return {
    coordinator,
    fleet,
    dataDir,
    api,
    async stop() {
      await fleet?.stop();
      await coordinator.stop();
      // Off the event loop: a data directory holds recordings and videos, and this process may host a shared fleet or browser meanwhile.
      if (!options.keepDataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits for a run's event stream to end (see test/support/run-end.ts) as this service's admin. */
export function runEnd(service: TestService, runId: string, options?: RunEndOptions): Promise<RunEnd> {
  return waitForRunEnd(service.coordinator.baseUrl, TEST_ADMIN_KEY, runId, options);
}

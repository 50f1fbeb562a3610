/**
 * Shared pieces of the cross-process tests: a temp data dir, a coordinator on port 0 with a simulated
 * fleet of real cell-agent processes, an authenticated fetch, and an SSE reader.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import type { RateLimits } from "../../coordinator/api/rate-limit.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { launchSimFleet, type SimFleet } from "../../simulators/fleet/launcher.js";

export const TEST_ADMIN_KEY = "asy_live_TestAdminKey0123456789abcdef";

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
 * `rateLimits`: per-key limits (default the coordinator's).
 * The fleet (`service.fleet`) can kill, restart, unplug and plug its cells.
 */
export async function startTestService(options: { cells?: string[]; keepDataDir?: string; simSpeed?: number; rateLimits?: Partial<RateLimits> } = {}): Promise<TestService> {
  const dataDir = options.keepDataDir ?? mkdtempSync(join(tmpdir(), "assay-it-"));
  const coordinator = await startCoordinator(compileCoordinatorOptions({
    port: 0, grpcPort: 0, dataDir, apiKey: TEST_ADMIN_KEY, ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
  }));
  let fleet: SimFleet | undefined;
  if (options.cells && options.cells.length > 0) {
    const wanted = new Set(options.cells);
    const cells = loadFirmwarePins().installations.filter((i) => wanted.has(i.cell));
    fleet = await launchSimFleet({
      cells,
      coordinatorAddress: coordinator.grpcAddress,
      enroll: (cellId, model) => coordinator.enrollCell(cellId, model),
      dataDir: join(dataDir, "cells"),
      speed: options.simSpeed ?? Number.POSITIVE_INFINITY,
      seed: 7,
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
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SseEvent {
  event: string;
  data: unknown;
}

/** Reads a text/event-stream response until it ends or `until` returns true. */
export async function readSse(response: Response, until: (event: SseEvent, all: SseEvent[]) => boolean): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      if (data.length === 0) continue;
      const parsed = { event, data: JSON.parse(data.join("\n")) };
      events.push(parsed);
      if (until(parsed, events)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

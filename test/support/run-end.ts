/**
 * Waiting for a run to end the way a client would: follow its event stream. The coordinator ends
 * GET /v1/runs/{id}/events after the terminal `status` event (coordinator/api/routes/events.ts), or
 * at once, after the history, when the run has already ended. Nothing polls.
 */
import { readSse, type SseEvent } from "./sse.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const TERMINAL = ["completed", "failed", "stopped"];

export interface RunEnd {
  /** The terminal status the stream ended with. */
  status: string;
  /** Every event the stream carried: the initial status, the episode history, live events. */
  events: SseEvent[];
  /** GET /v1/runs/{id} after the stream ended. */
  run: Json;
}

export interface RunEndOptions {
  /**
   * A safety net for a run that never ends (default 5 minutes), not a timing assertion: it fails
   * with the run's last status instead of a bare test timeout. Keep it under the test's timeout.
   */
  deadlineMs?: number;
}

/** Resolves when the run's event stream ends at a terminal status, with that status, the events seen and the final run. */
export async function waitForRunEnd(baseUrl: string | URL, key: string, runId: string, options: RunEndOptions = {}): Promise<RunEnd> {
  const deadlineMs = options.deadlineMs ?? 300_000;
  const headers = { authorization: `Bearer ${key}` };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), deadlineMs);
  let seen: SseEvent[] = [];
  const lastStatus = () => ([...seen].reverse().find((e) => e.event === "status")?.data as Json | undefined)?.status ?? "unknown";
  try {
    const response = await fetch(new URL(`/v1/runs/${runId}/events`, baseUrl), { headers, signal: controller.signal });
    if (response.status !== 200) throw new Error(`GET /v1/runs/${runId}/events answered ${response.status}: ${await response.text()}`);
    seen = await readSse(response, (_event, all) => ((seen = all), false));
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    const episodes = seen.filter((e) => e.event === "episode").length;
    throw new Error(`run ${runId} had not ended after ${deadlineMs} ms: last status ${lastStatus()}, ${episodes} episode events seen`);
  } finally {
    clearTimeout(timer);
  }
  const status = lastStatus();
  if (!TERMINAL.includes(status)) throw new Error(`the event stream of run ${runId} ended at status ${status}, not a terminal one: ${JSON.stringify(seen)}`);
  const response = await fetch(new URL(`/v1/runs/${runId}`, baseUrl), { headers });
  if (response.status !== 200) throw new Error(`GET /v1/runs/${runId} answered ${response.status}: ${await response.text()}`);
  const run = (await response.json()) as Json;
  if (run.status !== status) throw new Error(`run ${runId}'s event stream ended at ${status} but GET /v1/runs/${runId} says ${run.status}`);
  return { status, events: seen, run };
}

/**
 * `runs watch`: follows GET /v1/runs/{id}/events (server-sent `status` and `episode` events) and
 * draws episodes done out of the total, successes, failures and the running success rate with its
 * 95% Wilson interval computed from those counts. The final figures come from the Run's `result`
 * (whose interval accounts for differences between cells), printed when the stream ends.
 *
 * A stream that breaks before the run ends (a reset, a coordinator restart, 45 s without even a
 * heartbeat) is opened again, with Last-Event-ID when the server sent ids. The coordinator replays
 * the status and every finished episode on each connection, so episodes are counted by their number
 * and a replay never counts twice.
 */
import type { ApiClient } from "./api-client.js";
import type { CommandContext } from "./command-context.js";
import { CliError, EXIT, type ExitCode } from "./exit-codes.js";
import { interval, rate } from "./human-format.js";
import { progressPlace, progressView, type ProgressView } from "./progress-view.js";
import { endStateLines, pinsLine, TERMINAL_STATUSES, type Run } from "./run-summary.js";
import { readSse } from "./sse-reader.js";
import { wilson95 } from "./wilson-interval.js";

/** Three missed heartbeats (the coordinator sends one every 15 s): the connection is dead. */
const STALL_MS = 45_000;
/** Waits before each reconnect in a row; after the last, the watch gives up (exit 3). */
const RECONNECT_DELAYS_MS = [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000];

/** Episodes seen so far, by their 1-based number ("episode k of n"). */
class EpisodeTally {
  private readonly outcomes = new Map<number, string>();
  total: number | undefined;

  record(episode: number, of: number, outcome: string): void {
    this.outcomes.set(episode, outcome);
    if (Number.isInteger(of) && of > 0) this.total = of;
  }

  get done(): number {
    return this.outcomes.size;
  }

  get successes(): number {
    let n = 0;
    for (const outcome of this.outcomes.values()) if (outcome === "success") n++;
    return n;
  }
}

function tokensOf(tally: EpisodeTally, status: string): Record<string, string> {
  const successes = tally.successes;
  const done = tally.done;
  return {
    done: String(done),
    of: tally.total === undefined ? "?" : String(tally.total),
    successes: String(successes),
    failures: String(done - successes),
    rate: done > 0 ? `${rate(successes / done)} ${interval(wilson95(successes, done))}` : "-",
    status,
  };
}

function viewFor(ctx: CommandContext): ProgressView {
  return progressView(progressPlace(ctx.json), {
    barFormat: "{bar} {done}/{of} episodes | {successes} ok, {failures} failed | rate {rate} | {status}",
    lineOf: (_value, _total, t) =>
      `${t.done}/${t.of} episodes: ${t.successes} success, ${t.failures} failure; rate so far ${t.rate}; ${t.status}`,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why a connection ended, in a few words. */
function brokenBecause(error: unknown): string {
  if (error instanceof CliError) return error.message;
  const cause = (error as { cause?: { message?: string } })?.cause;
  return cause?.message ?? (error as Error)?.message ?? String(error);
}

/**
 * Watches the run to its end and returns the exit code: 0 completed, 1 failed or stopped. `ctx.json`
 * prints the final Run exactly as the API sends it, and nothing else on stdout.
 */
export async function watchRun(ctx: CommandContext, runId: string): Promise<ExitCode> {
  const api: ApiClient = ctx.api();
  const runPath = `/v1/runs/${encodeURIComponent(runId)}`;
  const first = (await api.json<Run>("GET", runPath)).data;
  const tally = new EpisodeTally();
  // Kind `run` knows its count up front (unless sized by auto(...)); others learn it from the first episode event.
  if (first.kind === "run" && typeof first.episodes === "number") tally.total = first.episodes;
  let status = first.status;

  ctx.out.human(`watching ${first.id}: ${pinsLine(first)}`);
  ctx.out.human("rate so far: successes out of the episodes done, with their 95% Wilson interval; Ctrl-C stops watching, not the run");
  const view = viewFor(ctx);
  const show = (shownStatus = status) => view.update(tally.done, Math.max(tally.total ?? 0, tally.done, 1), tokensOf(tally, shownStatus));
  show();

  const onSigint = () => {
    view.stop();
    process.stderr.write(`stopped watching ${first.id}; the run goes on (assay runs watch ${first.id})\n`);
    process.exit(130);
  };
  process.once("SIGINT", onSigint);
  try {
    let lastEventId = "";
    let retryMs: number | undefined;
    let failedInARow = 0;
    for (;;) {
      const controller = new AbortController();
      let stall: NodeJS.Timeout | undefined;
      const alive = () => {
        clearTimeout(stall);
        stall = setTimeout(() => controller.abort(new Error(`no data for ${STALL_MS / 1000} s`)), STALL_MS);
      };
      let why: string;
      try {
        alive();
        const response = await api.send("GET", `${runPath}/events`, {
          headers: { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
          signal: controller.signal,
        });
        for await (const message of readSse(response.body!, alive)) {
          failedInARow = 0;
          lastEventId = message.lastEventId || lastEventId;
          retryMs = message.retryMs ?? retryMs;
          let data: Record<string, unknown>;
          try {
            data = JSON.parse(message.data);
          } catch {
            continue; // not one of the documented events; nothing to show
          }
          if (message.event === "status" && typeof data.status === "string") status = data.status;
          else if (message.event === "episode" && typeof data.episode === "number") tally.record(data.episode, Number(data.of), String(data.outcome));
          show();
        }
        if (TERMINAL_STATUSES.includes(status)) break;
        why = "the event stream ended before the run did";
      } catch (error) {
        // An answer from the API (404, 401) will not change by asking again.
        if (error instanceof CliError && !error.unreachable) throw error;
        if (TERMINAL_STATUSES.includes(status)) break;
        why = controller.signal.aborted ? brokenBecause(controller.signal.reason) : brokenBecause(error);
      } finally {
        clearTimeout(stall);
        controller.abort();
      }
      if (failedInARow >= RECONNECT_DELAYS_MS.length) {
        view.stop();
        throw new CliError(EXIT.api, `lost the event stream of ${first.id} and could not get it back after ${failedInARow} tries (${why}); the run goes on: assay runs watch ${first.id}`);
      }
      const delayMs = retryMs ?? RECONNECT_DELAYS_MS[failedInARow];
      failedInARow++;
      show(`stream broke (${why}); reconnecting in ${delayMs / 1000} s`);
      await sleep(delayMs);
    }

    const final = await api.json<Run>("GET", runPath);
    show(final.data.status);
    view.stop();
    if (ctx.json) ctx.out.apiJson(final.text);
    else for (const line of endStateLines(final.data)) ctx.out.human(line);
    return final.data.status === "completed" ? EXIT.ok : EXIT.runNotCompleted;
  } finally {
    view.stop();
    process.removeListener("SIGINT", onSigint);
  }
}

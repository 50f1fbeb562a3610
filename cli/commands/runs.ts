/**
 * `assay runs submit|list|get|cancel|watch`: POST /v1/runs, GET /v1/runs, GET /v1/runs/{id},
 * POST /v1/runs/{id}/cancel and the live progress of GET /v1/runs/{id}/events.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { localTime, rate, table } from "../human-format.js";
import { readJsonBody } from "../request-body.js";
import { pinsLine, policyLine, runBlock, statusDetailLine, type Run } from "../run-summary.js";
import { watchRun } from "../watch-run.js";
import { openRunPage, type WebOptions } from "../run-page.js";

const runPath = (id: string) => `/v1/runs/${encodeURIComponent(id)}`;

/** A positive integer option (`--limit 5`), else a usage error. */
function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("it must be a positive integer.");
  return Number(value);
}

async function submit(ctx: CommandContext, source: string, options: { watch?: boolean; idempotencyKey?: string }) {
  const body = await readJsonBody(source);
  const headers: Record<string, string> = options.idempotencyKey !== undefined ? { "idempotency-key": options.idempotencyKey } : {};
  const answer = await ctx.api().json<Run>("POST", "/v1/runs", { body, headers });
  const run = answer.data;
  if (options.watch) {
    ctx.out.human(`submitted ${run.id} (${run.status})`);
    return watchRun(ctx, run.id);
  }
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const replayed = answer.headers.get("idempotent-replayed") === "true" ? " (already submitted with this Idempotency-Key: the original run)" : "";
  ctx.out.human(`submitted ${run.id} (${run.status})${replayed}: ${pinsLine(run)}, ${run.episodes} episodes, ${policyLine(run)}`);
  ctx.out.human(`watch it: assay runs watch ${run.id}`);
}

async function list(ctx: CommandContext, options: { kind?: string; status?: string; limit?: number; startingAfter?: string }) {
  const answer = await ctx.api().json<{ data: Run[]; has_more: boolean }>("GET", "/v1/runs", {
    query: { kind: options.kind, status: options.status, limit: options.limit, starting_after: options.startingAfter },
  });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const runs = answer.data.data;
  if (runs.length === 0) return ctx.out.human("no runs");
  ctx.out.human(
    table(
      [{ header: "RUN" }, { header: "KIND" }, { header: "STATUS" }, { header: "CREATED" }, { header: "TASK / ROBOT / ENVIRONMENT" }, { header: "EPISODES", align: "right" }, { header: "N", align: "right" }, { header: "RATE", align: "right" }],
      runs.map((r) => [r.id, r.kind, r.status, localTime(r.created), pinsLine(r), r.episodes === undefined ? "-" : String(r.episodes), r.result ? String(r.result.n) : "-", r.result ? rate(r.result.success_rate) : "-"]),
    ),
  );
  if (answer.data.has_more) ctx.out.human(`more: assay runs list --starting-after ${runs[runs.length - 1].id}`);
}

export function registerRuns(program: Command, runtime: CliRuntime): void {
  const runs = program.command("runs").description("submit, list, inspect, cancel and watch runs");

  runs
    .command("submit")
    .description("submit a run (POST /v1/runs) from a JSON body")
    .argument("<body.json>", "the run body: a file, or - for stdin")
    .option("-w, --watch", "then watch it to its end (exit 0 completed, 1 failed or stopped)")
    .option("--idempotency-key <key>", "send Idempotency-Key: a retry with the same key and body returns the original run")
    .addHelpText("after", "\nExample:\n  assay runs submit body.json --watch\n  cat body.json | assay runs submit - --idempotency-key nightly-2026-11-22")
    .action(runtime.action<[string, { watch?: boolean; idempotencyKey?: string }]>(submit));

  runs
    .command("list")
    .description("list runs, newest first (GET /v1/runs)")
    .option("--kind <kind>", "only this kind (run, compare, matrix, transfer, eval, threshold, verify)")
    .option("--status <status>", "only this status (queued, scheduling, running, completed, failed, stopped)")
    .option("--limit <n>", "at most n runs, 1..100 (default 20)", positiveInteger)
    .option("--starting-after <run_id>", "the page after this run")
    .action(runtime.action<[{ kind?: string; status?: string; limit?: number; startingAfter?: string }]>(list));

  runs
    .command("get")
    .description("show one run (GET /v1/runs/{id})")
    .argument("<run_id>")
    .option("--web", "open the run's page in the console in your browser ($BROWSER, else xdg-open/open/start)")
    .option("--print-url", "with --web: print the page's URL instead of opening it (the default without a terminal)")
    .action(
      runtime.action<[string, WebOptions]>(async (ctx, id, options) => {
        const answer = await ctx.api().json<Run>("GET", runPath(id));
        if (options.web || options.printUrl) return openRunPage(ctx, answer.data.id, options);
        if (ctx.json) return ctx.out.apiJson(answer.text);
        ctx.out.human(runBlock(answer.data));
      }),
    );

  runs
    .command("cancel")
    .description("stop a queued or running run (POST /v1/runs/{id}/cancel); the episodes that ran are kept")
    .argument("<run_id>")
    .action(
      runtime.action<[string]>(async (ctx, id) => {
        const answer = await ctx.api().json<Run>("POST", `${runPath(id)}/cancel`);
        if (ctx.json) return ctx.out.apiJson(answer.text);
        ctx.out.human(`${answer.data.id} ${answer.data.status}: ${statusDetailLine(answer.data) ?? ""}`.trimEnd());
      }),
    );

  runs
    .command("watch")
    .description("follow a run live to its end: episodes done of the total, successes, failures, the rate so far; exit 0 completed, 1 failed or stopped")
    .argument("<run_id>")
    .action(runtime.action<[string]>(async (ctx, id) => watchRun(ctx, id)));
}

/**
 * `assay runs submit|list|get|update|cancel|watch`: POST /v1/runs, GET /v1/runs, GET /v1/runs/{id},
 * POST /v1/runs/{id} (name and metadata), POST /v1/runs/{id}/cancel and the live progress of
 * GET /v1/runs/{id}/events.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { interval, localTime, rate, table } from "../human-format.js";
import { readJsonBody } from "../request-body.js";
import { usageError } from "../exit-codes.js";
import { pinsLine, policyLine, policyNameOf, runBlock, statusDetailLine, type Run } from "../run-summary.js";
import { watchRun } from "../watch-run.js";
import { openRunPage, type WebOptions } from "../run-page.js";

const runPath = (id: string) => `/v1/runs/${encodeURIComponent(id)}`;

/** A positive integer option (`--limit 5`), else a usage error. */
function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("it must be a positive integer.");
  return Number(value);
}

/** `--metadata key=value`, repeatable: gathered in order (a later key wins); `key=` is the empty value. */
function metadataPair(value: string, previous: Array<[string, string]> = []): Array<[string, string]> {
  const at = value.indexOf("=");
  if (at < 1) throw new InvalidArgumentError(`it must be key=value (key= for an empty value); got ${JSON.stringify(value)}.`);
  return [...previous, [value.slice(0, at), value.slice(at + 1)]];
}

interface LabelOptions {
  name?: string;
  metadata?: Array<[string, string]>;
}

/** The body text with --name and --metadata laid over its labels (without them: the text as written). */
function withLabels(text: string, options: LabelOptions): string {
  if (options.name === undefined && !options.metadata?.length) return text;
  const given = JSON.parse(text) as Record<string, unknown>; // readJsonBody checked it is a JSON object
  const metadata = { ...(given.metadata as Record<string, unknown> | undefined), ...Object.fromEntries(options.metadata ?? []) };
  return JSON.stringify({ ...given, ...(options.name !== undefined ? { name: options.name } : {}), ...(Object.keys(metadata).length ? { metadata } : {}) });
}

async function submit(ctx: CommandContext, source: string, options: { watch?: boolean; idempotencyKey?: string } & LabelOptions) {
  const body = withLabels(await readJsonBody(source), options);
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

interface ListOptions {
  kind?: string;
  status?: string;
  task?: string;
  robot?: string;
  policy?: string;
  metadata?: Array<[string, string]>;
  limit?: number;
  startingAfter?: string;
}

/** The list's filters as the API's query (metadata[key]=value, Stripe's style). */
function listQuery(options: ListOptions): Record<string, string | number | undefined> {
  return {
    kind: options.kind, status: options.status, task: options.task, robot: options.robot, policy_name: options.policy,
    ...Object.fromEntries((options.metadata ?? []).map(([key, value]) => [`metadata[${key}]`, value])),
    limit: options.limit, starting_after: options.startingAfter,
  };
}

/** The same filters as options, for the "more:" line of a page. */
function listArguments(options: ListOptions): string {
  const quoted = (text: string) => (/^[\w@.:/=-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`);
  const parts = [
    ...(["kind", "status", "task", "robot", "policy"] as const).flatMap((name) => (options[name] !== undefined ? [`--${name}`, quoted(options[name]!)] : [])),
    ...(options.metadata ?? []).flatMap(([key, value]) => ["--metadata", quoted(`${key}=${value}`)]),
    ...(options.limit !== undefined ? ["--limit", String(options.limit)] : []),
  ];
  return parts.length ? ` ${parts.join(" ")}` : "";
}

const signedPoints = (x: number) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;

/**
 * `0.75 [0.30, 0.95]`: the rate with its 95% interval; a compare or transfer whose result has a
 * headline (result.headline.difference) shows its difference instead, `+30 points [+12, +46]`, as
 * `runs get` leads with it.
 */
function rateCell(run: Run): string {
  const difference = (run.result?.headline as { difference?: { diff?: unknown; ci?: unknown } } | undefined)?.difference;
  if (difference && typeof difference.diff === "number" && Array.isArray(difference.ci)) {
    return `${signedPoints(difference.diff)} points [${signedPoints(difference.ci[0] as number)}, ${signedPoints(difference.ci[1] as number)}]`;
  }
  return run.result && run.result.n !== 0 ? `${rate(run.result.success_rate)} ${interval(run.result.ci95)}` : "-";
}

async function list(ctx: CommandContext, options: ListOptions) {
  const answer = await ctx.api().json<{ data: Run[]; has_more: boolean }>("GET", "/v1/runs", { query: listQuery(options) });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const runs = answer.data.data;
  if (runs.length === 0) return ctx.out.human("no runs");
  const pins = (r: Run) => r.resolved_pins ?? {};
  ctx.out.human(
    table(
      [
        { header: "RUN" }, { header: "NAME" }, { header: "POLICY" }, { header: "KIND" }, { header: "TASK" }, { header: "ROBOT" },
        { header: "N", align: "right" }, { header: "RATE [95% CI]", align: "right" }, { header: "STATUS" }, { header: "CREATED" },
      ],
      runs.map((r) => [
        r.id, r.name ?? "-", policyNameOf(r), r.kind, pins(r).task ?? r.task ?? "-", pins(r).robot ?? r.robot ?? r.robots?.join(",") ?? "-",
        r.result ? String(r.result.n) : "-", rateCell(r), r.status, localTime(r.created),
      ]),
    ),
  );
  if (answer.data.has_more) ctx.out.human(`more: assay runs list${listArguments(options)} --starting-after ${runs[runs.length - 1].id}`);
}

async function update(ctx: CommandContext, id: string, options: LabelOptions & { removeName?: boolean }) {
  if (options.name === undefined && !options.removeName && !options.metadata?.length) {
    throw usageError("nothing to change: give --name, --remove-name or --metadata key=value (key= removes the key)");
  }
  const body = {
    ...(options.removeName ? { name: null } : options.name !== undefined ? { name: options.name } : {}),
    ...(options.metadata?.length ? { metadata: Object.fromEntries(options.metadata) } : {}),
  };
  const answer = await ctx.api().json<Run>("POST", runPath(id), { body: JSON.stringify(body) });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const run = answer.data;
  const metadata = Object.entries(run.metadata ?? {}).map(([key, value]) => `${key}=${value}`).join(", ");
  ctx.out.human(`${run.id}: name ${run.name === null || run.name === undefined ? "(none)" : JSON.stringify(run.name)}; metadata ${metadata || "(none)"}`);
}

export function registerRuns(program: Command, runtime: CliRuntime): void {
  const runs = program.command("runs").description("submit, list, inspect, cancel and watch runs");

  runs
    .command("submit")
    .description("submit a run (POST /v1/runs) from a JSON body")
    .argument("<body.json>", "the run body: a file, or - for stdin")
    .option("-w, --watch", "then watch it to its end (exit 0 completed, 1 failed or stopped)")
    .option("--idempotency-key <key>", "send Idempotency-Key: a retry with the same key and body returns the original run")
    .option("--name <name>", "the run's name (a short title shown in lists; replaces the body's name)")
    .option("--metadata <key=value>", "a metadata key of your own, repeatable (merged into the body's metadata)", metadataPair)
    .addHelpText("after", "\nExample:\n  assay runs submit body.json --watch --name 'expert baseline' --metadata experiment=grasp-v2\n  cat body.json | assay runs submit - --idempotency-key nightly-2026-11-22")
    .action(runtime.action<[string, { watch?: boolean; idempotencyKey?: string } & LabelOptions]>(submit));

  runs
    .command("list")
    .description("list runs, newest first (GET /v1/runs)")
    .option("--kind <kind>", "only this kind (run, compare, matrix, transfer, eval, threshold, verify)")
    .option("--status <status>", "only this status (queued, scheduling, running, completed, failed, stopped)")
    .option("--task <task>", "only runs of this task: a name (any revision) or <name>@v<N>")
    .option("--robot <robot>", "only runs on this robot: a model (so101) or a pin (so101@3.11)")
    .option("--policy <name>", "only runs of this policy: its policy_name, else its image or hf")
    .option("--metadata <key=value>", "only runs whose metadata has key=value; repeatable (all must match)", metadataPair)
    .option("--limit <n>", "at most n runs, 1..100 (default 20)", positiveInteger)
    .option("--starting-after <run_id>", "the page after this run")
    .addHelpText("after", "\nExample:\n  assay runs list --metadata experiment=grasp-v2 --policy expert --task pick-cube")
    .action(runtime.action<[ListOptions]>(list));

  runs
    .command("update")
    .description("change a run's name or metadata (POST /v1/runs/{id}); what ran and its result do not change")
    .argument("<run_id>")
    .option("--name <name>", "the new name")
    .option("--remove-name", "remove the name")
    .option("--metadata <key=value>", "set a metadata key, repeatable; key= removes the key; keys not given are kept", metadataPair)
    .addHelpText("after", "\nExample:\n  assay runs update run_abc --name 'expert, seed set A' --metadata reviewed=yes --metadata draft=")
    .action(runtime.action<[string, LabelOptions & { removeName?: boolean }]>(update));

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

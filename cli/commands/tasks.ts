/**
 * `assay tasks list|get|create|amend|pilot|freeze|revise`: Task Specs and their lifecycle, draft →
 * piloting → frozen (docs/api.md, "Tasks"). create and amend send a JSON file as written (checked to
 * be a JSON object first); the API validates it and names what to fix.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { fields, interval, localTime, rate, table } from "../human-format.js";
import { readJsonBody } from "../request-body.js";
import { watchRun } from "../watch-run.js";

interface Task {
  id: string;
  name: string;
  rev: string | null;
  status: "draft" | "piloting" | "frozen";
  visibility: string;
  environment_class: string;
  created: string;
  frozen: string | null;
  signatures: string[];
  initial_conditions: Record<string, unknown>;
  success_predicates: Record<string, string>[];
  stages: Record<string, string>[];
  pilot: { run_id?: string; robot: string; episodes: number; amendments: { at: string; fields: string[] }[] } | null;
  baseline_check?: { pilot_run_id: string; pilot_n: number; pilot_rate: number; pilot_ci95: [number, number]; internal_rate: number; disagrees: boolean } | null;
}

interface Pilot {
  run_id: string;
  robot: string;
  episodes: number;
  stream_url: string | null;
}

const TASK_EXAMPLE = 'a Task Spec such as {"name": "stack-blocks", "initial_conditions": {...}, "success_predicates": [...]}';

const taskPath = (id: string) => `/v1/tasks/${encodeURIComponent(id)}`;

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("it must be a positive integer.");
  return Number(value);
}

const predicates = (list: Record<string, string>[]) => list.map((p) => Object.entries(p).map(([name, expr]) => `${name}: ${expr}`).join("; ")).join(" | ") || "none";

function taskBlock(t: Task): string {
  const check = t.baseline_check;
  return fields([
    ["task", `${t.id}${t.rev ? ` (${t.rev})` : ""}`],
    ["status", t.status],
    ["name", t.name],
    ["visibility", t.visibility],
    ["environment", `class ${t.environment_class}`],
    ["created", localTime(t.created)],
    ["frozen", t.frozen ? localTime(t.frozen) : undefined],
    ["objects", Object.keys(t.initial_conditions ?? {}).join(", ") || "none"],
    ["success", predicates(t.success_predicates ?? [])],
    ["stages", t.stages?.length ? predicates(t.stages) : undefined],
    ["pilot", t.pilot ? `${t.pilot.run_id ?? "(run of its owner)"} on ${t.pilot.robot}, ${t.pilot.episodes} episodes, ${t.pilot.amendments.length} amendments since` : undefined],
    ["baseline", check ? `pilot ${rate(check.pilot_rate)} ${interval(check.pilot_ci95)} (n ${check.pilot_n}) vs internal ${rate(check.internal_rate)}: ${check.disagrees ? "they disagree" : "consistent"}` : undefined],
    ["signatures", t.signatures.length ? t.signatures.map((s) => s.split(":").slice(0, 2).join(":")).join(", ") : undefined],
  ]);
}

/** The next step a task's owner can take, for the human output. */
function nextStep(t: Task): string | undefined {
  if (t.status === "draft") return `pilot it: assay tasks pilot ${t.id} --robot so101@latest`;
  if (t.status === "piloting") return `freeze it when the pilot looks right: assay tasks freeze ${t.id}`;
  return t.rev ? `runs can pin it: "task": "${t.rev}"` : undefined;
}

async function show(ctx: CommandContext, text: string, task: Task, lead?: string) {
  if (ctx.json) return ctx.out.apiJson(text);
  if (lead) ctx.out.human(lead);
  ctx.out.human(taskBlock(task));
  const next = nextStep(task);
  if (next) ctx.out.human(next);
}

async function list(ctx: CommandContext, options: { limit?: number; startingAfter?: string }) {
  const answer = await ctx.api().json<{ data: Task[]; has_more: boolean }>("GET", "/v1/tasks", { query: { limit: options.limit, starting_after: options.startingAfter } });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const tasks = answer.data.data;
  if (tasks.length === 0) return ctx.out.human("no tasks");
  ctx.out.human(
    table(
      [{ header: "TASK" }, { header: "REV" }, { header: "STATUS" }, { header: "VISIBILITY" }, { header: "CLASS" }, { header: "CREATED" }],
      tasks.map((t) => [t.id, t.rev ?? "-", t.status, t.visibility, t.environment_class, localTime(t.created)]),
    ),
  );
  if (answer.data.has_more) ctx.out.human(`more: assay tasks list --starting-after ${tasks[tasks.length - 1].id}`);
}

interface PilotOptions {
  robot: string;
  episodes?: number;
  environment?: string;
  watch?: boolean;
}

async function pilot(ctx: CommandContext, id: string, options: PilotOptions) {
  const body = { robot: options.robot, ...(options.episodes !== undefined ? { episodes: options.episodes } : {}), ...(options.environment ? { environment: options.environment } : {}) };
  const answer = await ctx.api().json<Pilot>("POST", `${taskPath(id)}/pilot`, { body: JSON.stringify(body) });
  const p = answer.data;
  if (options.watch) {
    ctx.out.human(`piloting ${id}: run ${p.run_id} on ${p.robot}, ${p.episodes} episodes`);
    return watchRun(ctx, p.run_id);
  }
  if (ctx.json) return ctx.out.apiJson(answer.text);
  ctx.out.human(`piloting ${id}: run ${p.run_id} on ${p.robot}, ${p.episodes} episodes (calibration only: never in a verification report)`);
  ctx.out.human(`watch it: assay runs watch ${p.run_id}`);
}

export function registerTasks(program: Command, runtime: CliRuntime): void {
  const tasks = program.command("tasks").description("Task Specs: create, amend, pilot, freeze and revise them; list and show them");

  tasks
    .command("list")
    .description("the account's tasks and every published frozen revision, newest first (GET /v1/tasks)")
    .option("--limit <n>", "at most n tasks, 1..100 (default 20)", positiveInteger)
    .option("--starting-after <task_id>", "the page after this task")
    .action(runtime.action<[{ limit?: number; startingAfter?: string }]>(list));

  tasks
    .command("get")
    .description("one task by id or frozen revision (GET /v1/tasks/{id})")
    .argument("<task>", "a task id (task_...) or a frozen revision (pick-cube@v1)")
    .action(
      runtime.action<[string]>(async (ctx, id) => {
        const answer = await ctx.api().json<Task>("GET", taskPath(id));
        await show(ctx, answer.text, answer.data);
      }),
    );

  tasks
    .command("create")
    .description("create a draft Task Spec (POST /v1/tasks) from a JSON file")
    .argument("<spec.json | ->", "the spec: a file, or - for stdin")
    .addHelpText("after", "\nExample:\n  assay tasks create stack-blocks.json\n  (fields: docs/api.md, \"POST /v1/tasks\"; name, initial_conditions and success_predicates are required)")
    .action(
      runtime.action<[string]>(async (ctx, source) => {
        const answer = await ctx.api().json<Task>("POST", "/v1/tasks", { body: await readJsonBody(source, process.stdin, TASK_EXAMPLE) });
        await show(ctx, answer.text, answer.data, `created ${answer.data.id} (draft)`);
      }),
    );

  tasks
    .command("amend")
    .description("change a draft or piloting task (POST /v1/tasks/{id}/amend) with the fields of a JSON file")
    .argument("<task_id>")
    .argument("<fields.json | ->", "any subset of the creation fields: a file, or - for stdin")
    .action(
      runtime.action<[string, string]>(async (ctx, id, source) => {
        const answer = await ctx.api().json<Task>("POST", `${taskPath(id)}/amend`, { body: await readJsonBody(source, process.stdin, 'the fields to change, such as {"visibility": "published"}') });
        await show(ctx, answer.text, answer.data, `amended ${answer.data.id}`);
      }),
    );

  tasks
    .command("pilot")
    .description("start a calibration run of a draft or piloting task (POST /v1/tasks/{id}/pilot)")
    .argument("<task_id>")
    .requiredOption("--robot <model@firmware>", "the robot pin, e.g. so101@latest")
    .option("--episodes <n>", "1..50 (default 10)", positiveInteger)
    .option("--environment <name@version>", "default: the first environment of the task's class with the robot")
    .option("-w, --watch", "then watch the pilot run to its end")
    .addHelpText("after", "\nExample:\n  assay tasks pilot task_... --robot so101@latest --episodes 5 --watch")
    .action(runtime.action<[string, PilotOptions]>(pilot));

  tasks
    .command("freeze")
    .description("freeze a piloting task as <name>@v<N>, signed (POST /v1/tasks/{id}/freeze); it never changes after")
    .argument("<task_id>")
    .action(
      runtime.action<[string]>(async (ctx, id) => {
        const answer = await ctx.api().json<Task>("POST", `${taskPath(id)}/freeze`);
        await show(ctx, answer.text, answer.data, `froze ${answer.data.id} as ${answer.data.rev}`);
      }),
    );

  tasks
    .command("revise")
    .description("start the next revision of a frozen task as a new draft (POST /v1/tasks/{id}/revise)")
    .argument("<task>", "a frozen task's id or revision")
    .action(
      runtime.action<[string]>(async (ctx, id) => {
        const answer = await ctx.api().json<Task>("POST", `${taskPath(id)}/revise`);
        await show(ctx, answer.text, answer.data, `created ${answer.data.id}, a draft revising ${id}`);
      }),
    );
}

/** `assay quote <body.json>`: prices a run body (POST /v1/quote) without submitting it. */
import type { Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { fields, hours, localTime, table, usd } from "../human-format.js";
import { readJsonBody } from "../request-body.js";

interface Quote {
  id: string;
  expires: string;
  n: number;
  n_basis: "planned" | "maximum";
  robot_hours: number;
  environment_hours: number;
  cost_usd: number;
  price: { priority: string; priority_multiplier: number; episode_estimate_s: number };
  units: Array<{ key: string; robot: string; environment: string; n: number; tier: string; environment_class: string; cost_usd: number }>;
  pins: Record<string, string>;
}

async function quote(ctx: CommandContext, source: string) {
  const body = await readJsonBody(source);
  const answer = await ctx.api().json<Quote>("POST", "/v1/quote", { body });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const q = answer.data;
  ctx.out.human(
    fields([
      ["quote", `${q.id} (valid until ${localTime(q.expires)})`],
      ["pins", Object.values(q.pins ?? {}).join(", ")],
      ["episodes", `${q.n}${q.n_basis === "maximum" ? " at most" : ""}`],
      ["robot time", hours(q.robot_hours)],
      ["environment time", hours(q.environment_hours)],
      ["cost", `${usd(q.cost_usd)} at most (each episode priced at ${q.price.episode_estimate_s} s, ${q.price.priority} priority x${q.price.priority_multiplier}); billed on what runs`],
    ]),
  );
  if (q.units.length > 1) {
    ctx.out.human(
      table(
        [{ header: "UNIT" }, { header: "ROBOT" }, { header: "ENVIRONMENT" }, { header: "TIER" }, { header: "N", align: "right" }, { header: "COST", align: "right" }],
        q.units.map((u) => [u.key, u.robot, u.environment, `${u.tier}/${u.environment_class}`, String(u.n), usd(u.cost_usd)]),
      ),
    );
  }
  ctx.out.human(`submit at this price: add "quote_id": "${q.id}" to the body and run assay runs submit`);
}

export function registerQuote(program: Command, runtime: CliRuntime): void {
  program
    .command("quote")
    .description("price a run body without submitting it (POST /v1/quote)")
    .argument("<body.json>", "the run body: a file, or - for stdin")
    .addHelpText("after", "\nExample:\n  assay quote body.json")
    .action(runtime.action<[string]>(quote));
}

/** `assay usage [--period YYYY-MM]`: the account's metered usage and budget for a month (GET /v1/usage). */
import { InvalidArgumentError, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { fields, hours, usd } from "../human-format.js";

interface Usage {
  period: string;
  robot_hours: Record<string, number>;
  env_hours: Record<string, number>;
  usd_total: number;
  budget: { monthly_usd: number | null; hard: boolean; remaining_usd: number | null };
}

/** This UTC month, as the API names months. */
function currentPeriod(now = new Date()): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
}

function period(value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw new InvalidArgumentError("it must be a UTC month as YYYY-MM, e.g. 2026-11.");
  return value;
}

const perKey = (values: Record<string, number>) =>
  Object.entries(values).filter(([, h]) => h > 0).map(([name, h]) => `${name} ${hours(h)}`).join(", ") || "none";

async function usage(ctx: CommandContext, options: { period?: string }) {
  const answer = await ctx.api().json<Usage>("GET", "/v1/usage", { query: { period: options.period ?? currentPeriod() } });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const u = answer.data;
  const budget = u.budget.monthly_usd === null ? "none set" : `${usd(u.budget.monthly_usd)} a month (${u.budget.hard ? "hard: work stops at it" : "soft: informational"}), ${usd(u.budget.remaining_usd)} left`;
  ctx.out.human(
    fields([
      ["period", `${u.period} (UTC)`],
      ["robot time", perKey(u.robot_hours)],
      ["environment time", perKey(u.env_hours)],
      ["total", usd(u.usd_total)],
      ["budget", budget],
    ]),
  );
}

export function registerUsage(program: Command, runtime: CliRuntime): void {
  program
    .command("usage")
    .description("the account's robot and environment hours and cost for a month, and its budget (GET /v1/usage)")
    .option("--period <YYYY-MM>", "the UTC month (default this one)", period)
    .addHelpText("after", "\nExample:\n  assay usage --period 2026-11")
    .action(runtime.action<[{ period?: string }]>(usage));
}

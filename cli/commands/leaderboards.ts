/**
 * `assay leaderboards list|get`: the public boards of published results (GET /v1/leaderboards and
 * /v1/leaderboards/{id}; no key needed, a key that is set is sent). A board shows its pins, its entries
 * in rank order with their tier, rate and 95% interval, the tier rule's words, and the Bradley-Terry
 * strengths when paired compares exist (docs/leaderboards.md).
 */
import type { Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { fields, interval, localTime, rate, table } from "../human-format.js";

type Interval = [number, number];

interface Pins {
  kind: "suite" | "task";
  subject: string;
  robot: string;
  environment: string | null;
  perturbation_rev: string;
  perturbation: Record<string, unknown> | null;
  instructions: string;
}

interface BoardSummary {
  id: string;
  kind: string;
  title: string;
  pins: Pins;
  updated: string;
  entries: number;
  leader: { policy_name: string; account: string; success_rate: number; ci95: Interval; n: number };
}

interface Entry {
  rank: number;
  tier: number;
  policy_name: string;
  account: string;
  run_id: string;
  run_kind: string;
  n: number;
  successes: number;
  success_rate: number;
  ci95: Interval;
  interval_method: string;
  completed: string;
}

interface Board {
  id: string;
  title: string;
  pins: Pins;
  updated: string;
  entries: Entry[];
  ranking: { tiers: number; rule: { description: string; error_rate: string; alpha: number } };
  bradley_terry: { policies: { id: string; log_strength: number; ci95: Interval | null; elo?: number }[]; components: string[][]; note?: string } | null;
}

async function list(ctx: CommandContext) {
  const answer = await ctx.publicApi().json<{ data: BoardSummary[] }>("GET", "/v1/leaderboards");
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const boards = answer.data.data;
  if (boards.length === 0) return ctx.out.human("no leaderboards yet: a board appears when an opted-in account publishes a completed run (\"publish\": \"leaderboard\")");
  ctx.out.human(
    table(
      [{ header: "BOARD" }, { header: "KIND" }, { header: "SUBJECT" }, { header: "ROBOT" }, { header: "ENTRIES", align: "right" }, { header: "LEADER" }, { header: "RATE", align: "right" }, { header: "95% CI" }, { header: "UPDATED" }],
      boards.map((b) => [b.id, b.kind, b.pins.subject, b.pins.robot, String(b.entries), `${b.leader.policy_name} (${b.leader.account})`, rate(b.leader.success_rate), interval(b.leader.ci95), localTime(b.updated)]),
    ),
  );
}

async function get(ctx: CommandContext, id: string) {
  const answer = await ctx.publicApi().json<Board>("GET", `/v1/leaderboards/${encodeURIComponent(id)}`);
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const b = answer.data;
  const p = b.pins;
  const perturbation = p.perturbation ? ` ${JSON.stringify(p.perturbation)}` : "";
  ctx.out.human(
    fields([
      ["board", `${b.id}: ${b.title}`],
      ["pins", [p.subject, p.robot, p.environment, `${p.perturbation_rev}${perturbation}`, `instructions ${p.instructions}`].filter(Boolean).join(", ")],
      ["updated", localTime(b.updated)],
    ]),
  );
  ctx.out.human("");
  ctx.out.human(
    table(
      [{ header: "RANK", align: "right" }, { header: "TIER", align: "right" }, { header: "POLICY" }, { header: "ACCOUNT" }, { header: "N", align: "right" }, { header: "RATE", align: "right" }, { header: "95% CI" }, { header: "RUN" }],
      b.entries.map((e) => [String(e.rank), String(e.tier), e.policy_name, e.account, String(e.n), rate(e.success_rate), interval(e.ci95), e.run_id]),
    ),
  );
  ctx.out.human("");
  const tiers = b.ranking.tiers === 1 ? "one tier: no entry is claimed to differ from another" : `${b.ranking.tiers} tiers: entries in one tier are not claimed to differ`;
  ctx.out.human(`Ranked by the lower end of each entry's 95% interval; ${tiers}, and the chance that any claim across tiers is wrong is at most ${b.ranking.rule.alpha}.`);
  if (b.bradley_terry && b.bradley_terry.policies.length > 0) {
    ctx.out.human("");
    ctx.out.human("Bradley-Terry strengths from paired compares (comparable only within one group):");
    ctx.out.human(
      table(
        [{ header: "POLICY" }, { header: "LOG STRENGTH", align: "right" }, { header: "95% CI" }, { header: "GROUP", align: "right" }],
        b.bradley_terry.policies.map((bt) => [
          bt.id, bt.log_strength.toFixed(2), bt.ci95 ? `[${bt.ci95[0].toFixed(2)}, ${bt.ci95[1].toFixed(2)}]` : "-",
          String(b.bradley_terry!.components.findIndex((c) => c.includes(bt.id)) + 1),
        ]),
      ),
    );
  }
}

export function registerLeaderboards(program: Command, runtime: CliRuntime): void {
  const boards = program.command("leaderboards").description("the public leaderboards of published results (no key needed)");
  boards.command("list").description("every board, most recently updated first, with its leader (GET /v1/leaderboards)").action(runtime.action<[]>(list));
  boards
    .command("get")
    .description("one board: its pins, the entries in rank order with tier, rate and 95% interval (GET /v1/leaderboards/{id})")
    .argument("<leaderboard_id>")
    .action(runtime.action<[string]>(get));
}

/**
 * `assay compare <run> <run> [...]`: two to six runs side by side (GET /v1/comparisons): each side's rate
 * with its interval and n, every pair's difference with its interval and the sentence it supports, and a
 * warning when their pins differ. The same words as the console's compare page.
 */
import type { Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { table } from "../human-format.js";

interface Comparison {
  sides: Array<{ label: string; run_id: string; unit: string | null; n: number; successes: number; success_rate: number; wilson95: [number, number]; ci95: [number, number]; published: boolean }>;
  differences: Array<{
    a: string; b: string; diff: number; ci: [number, number]; ci_level: number; claim: "model" | "these_cells"; shown: string; sentence: string;
    these_cells: { diff: number; ci: [number, number] };
  }>;
  simultaneous: { pairs: number; ci_level: number };
  warnings: string[];
  lines: string[];
}

const percent = (x: number) => `${Number((x * 100).toFixed(1))}%`;
const signedPoints = (x: number) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;
const SHOWN: Record<string, string> = { a_higher: "first higher", b_higher: "second higher", none: "no difference shown" };

async function compare(ctx: CommandContext, runs: string[]) {
  const answer = await ctx.api().json<Comparison>("GET", "/v1/comparisons", { query: { runs: runs.join(",") } });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const c = answer.data;
  ctx.out.human(table(
    [{ header: "SIDE" }, { header: "RUN" }, { header: "N", align: "right" }, { header: "RATE", align: "right" }, { header: "95% WILSON", align: "right" }, { header: "95% MODEL-LEVEL", align: "right" }],
    c.sides.map((s) => [
      s.label, `${s.run_id}${s.unit ? ` ${s.unit}` : ""}${s.published ? " (published)" : ""}`, String(s.n), percent(s.success_rate),
      `${percent(s.wilson95[0])} to ${percent(s.wilson95[1])}`, `${percent(s.ci95[0])} to ${percent(s.ci95[1])}`,
    ]),
  ));
  ctx.out.human("");
  // Two claims per pair, side by side: the model-level difference (what a new cell of the robot model
  // would show: each side's posterior over its cells shrinks toward the prior, so it is not the raw
  // difference of the rates above) and the difference on these very cells (Newcombe's interval of the
  // pooled counts, which is the raw difference of the rates). A run stored without per-cell counts
  // has only the second.
  const level = `${Number((c.simultaneous.ci_level * 100).toFixed(1))}%`;
  ctx.out.human(table(
    [
      { header: "DIFFERENCE" }, { header: "NEW CELL", align: "right" }, { header: `${level} INTERVAL`, align: "right" },
      { header: "THESE CELLS", align: "right" }, { header: `${level} INTERVAL`, align: "right" }, { header: "SHOWS" },
    ],
    c.differences.map((d) => [
      `${d.a} - ${d.b}`,
      d.claim === "model" ? signedPoints(d.diff) : "-",
      d.claim === "model" ? `${signedPoints(d.ci[0])} to ${signedPoints(d.ci[1])}` : "-",
      signedPoints(d.these_cells.diff), `${signedPoints(d.these_cells.ci[0])} to ${signedPoints(d.these_cells.ci[1])}`,
      SHOWN[d.shown] ?? d.shown,
    ]),
  ));
  ctx.out.human("Points of success rate, first side minus second. NEW CELL: the model-level difference, for a new cell of the robot model; THESE CELLS: on the cells that ran the episodes (the rates above).");
  ctx.out.human("");
  // The sentences, the simultaneous-level note and the warnings (the sides' lines are the table above).
  for (const line of c.lines.slice(0, c.differences.length + 1 + c.warnings.length)) ctx.out.human(line);
}

export function registerCompare(program: Command, runtime: CliRuntime): void {
  program
    .command("compare")
    .description("put two to six runs side by side (GET /v1/comparisons): rates with intervals, every pair's difference, a warning when pins differ")
    .argument("<run_ids...>", "2..6 run ids: your runs, or runs published on a leaderboard")
    .addHelpText("after", "\nExample:\n  assay compare run_expert run_novice\n  assay compare run_a run_b run_c --json")
    .action(runtime.action<[string[]]>(compare));
}

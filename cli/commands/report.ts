/**
 * `assay report <run> [--pdf out.pdf]`: the verification report of a completed run
 * (GET /v1/runs/{id}/report): its citation and headline figures, and with --pdf the PDF
 * (`?format=pdf`) saved to a file.
 */
import type { Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { downloadToFile } from "../download-file.js";
import { byteSize, fields, hours, resultLine, usd } from "../human-format.js";

interface Report {
  run_id: string;
  citation: string;
  result: { n: number; success_rate: number; ci95: [number, number]; interval_method: string };
  resolved_pins: Record<string, string>;
  failure_clusters: Record<string, number>;
  cost: { robot_hours: number; environment_hours: number; cost_usd: number };
  units: Array<{ key: string; citation: string }>;
  cells?: { statement?: string[] };
  pdf_url: string;
}

async function report(ctx: CommandContext, runId: string, options: { pdf?: string }) {
  const api = ctx.api();
  const path = `/v1/runs/${encodeURIComponent(runId)}/report`;
  const answer = await api.json<Report>("GET", path);
  if (ctx.json) ctx.out.apiJson(answer.text);
  else {
    const r = answer.data;
    const clusters = Object.entries(r.failure_clusters ?? {}).map(([name, count]) => `${name} ${count}`).join(", ");
    ctx.out.human(r.citation);
    ctx.out.human(
      fields([
        ["result", resultLine(r.result)],
        ["pins", Object.values(r.resolved_pins ?? {}).join(", ")],
        ["failure clusters", clusters || "none"],
        ["cost", r.cost ? `${usd(r.cost.cost_usd)} (robot ${hours(r.cost.robot_hours)}, environment ${hours(r.cost.environment_hours)})` : undefined],
        ["units", r.units?.length ? String(r.units.length) : undefined],
        ["pdf", options.pdf ? undefined : `${r.pdf_url} (or assay report ${r.run_id} --pdf report.pdf)`],
      ]),
    );
    // The headline in words, as the console and the PDF show it.
    for (const line of r.cells?.statement ?? []) ctx.out.human(line);
    for (const unit of r.units ?? []) ctx.out.human(`  ${unit.citation}`);
  }
  if (options.pdf) {
    const file = await downloadToFile(api, api.url(path, { format: "pdf" }).href, options.pdf);
    ctx.out.info(`wrote ${file.path} (${byteSize(file.bytes)})`);
  }
}

export function registerReport(program: Command, runtime: CliRuntime): void {
  program
    .command("report")
    .description("show a completed run's verification report; --pdf saves it as a PDF")
    .argument("<run_id>")
    .option("--pdf <file>", "save the PDF report to this file")
    .addHelpText("after", "\nExample:\n  assay report run_... --pdf report.pdf")
    .action(runtime.action<[string, { pdf?: string }]>(report));
}

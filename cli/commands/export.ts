/**
 * `assay export <run> --format lerobot|rlds|mcap-bundle [--out dir] [--extract]`: asks for an export
 * (POST /v1/runs/{id}/export), shows `progress.episodes_done/episodes_total` while it is prepared
 * (polling GET /v1/exports/{id}), downloads `download_url` with a byte bar, checks the archive's size
 * and SHA-256 against the export's `file`, and writes it under --out. --extract unpacks it with the
 * system's tar program when there is one (no tar dependency), else says where the archive is.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Option, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { downloadToFile } from "../download-file.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";
import { byteSize } from "../human-format.js";
import { progressPlace, progressView } from "../progress-view.js";

interface Export {
  id: string;
  status: "preparing" | "ready" | "failed" | "expired";
  format: string;
  download_url: string | null;
  progress: { episodes_done: number; episodes_total: number };
  episodes: { included: number; excluded: Record<string, number> } | null;
  file: { name: string; bytes: number; sha256: string } | null;
  failure: { reason: string; message: string } | null;
}

interface ExportOptions {
  format: string;
  out: string;
  extract?: boolean;
}

/** How often to ask whether the archive is ready (the API suggests a second is plenty). */
const POLL_MS = 500;

const run = promisify(execFile);

/** Unpacks `archive` into `dir` with tar(1); returns the archive's top folder, or null when there is no tar program. */
async function extract(archive: string, dir: string): Promise<string | null> {
  try {
    const listing = await run("tar", ["-tf", archive], { maxBuffer: 64 * 1024 * 1024 });
    await run("tar", ["-xf", archive, "-C", dir]);
    const top = listing.stdout.split("\n").find((line) => line.trim() !== "")?.split("/")[0] ?? "";
    return join(dir, top);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw usageError(`cannot extract ${archive} into ${dir}: ${String((error as { stderr?: string }).stderr || (error as Error).message).trim()}`);
  }
}

async function exportRun(ctx: CommandContext, runId: string, options: ExportOptions) {
  const api = ctx.api();
  const created = await api.json<Export>("POST", `/v1/runs/${encodeURIComponent(runId)}/export`, { body: JSON.stringify({ format: options.format }) });
  let exp = created.data;
  let text = created.text;
  const place = progressPlace(ctx.json);
  ctx.out.human(`export ${exp.id}: ${options.format} of ${runId}`);

  const preparing = progressView(place, {
    barFormat: "preparing   {bar} {value}/{total} episodes",
    lineOf: (value, total) => `preparing: ${value}/${total} episodes`,
  });
  while (exp.status === "preparing") {
    preparing.update(exp.progress.episodes_done, Math.max(exp.progress.episodes_total, 1), {});
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const polled = await api.json<Export>("GET", `/v1/exports/${encodeURIComponent(exp.id)}`);
    exp = polled.data;
    text = polled.text;
  }
  if (exp.status === "ready") preparing.update(exp.progress.episodes_done, Math.max(exp.progress.episodes_total, 1), {});
  preparing.stop();
  if (exp.status !== "ready" || !exp.download_url || !exp.file) {
    if (ctx.json) ctx.out.apiJson(text);
    const why = exp.failure ? `${exp.failure.message} (${exp.failure.reason})` : "no reason given";
    throw new CliError(EXIT.api, `export ${exp.id} is ${exp.status}: ${why}`);
  }
  const excluded = Object.entries(exp.episodes?.excluded ?? {}).map(([reason, n]) => `${n} ${reason}`).join(", ");
  ctx.out.human(`ready: ${exp.episodes?.included ?? "?"} episodes${excluded ? ` (left out: ${excluded})` : ""}, ${byteSize(exp.file.bytes)}`);

  const downloading = progressView(place, {
    barFormat: "downloading {bar} {percentage}% {doneBytes}/{totalBytes}",
    lineOf: (value, total, t) => `downloading: ${Math.floor((value / total) * 10) * 10}% of ${t.totalBytes}`,
  });
  const expectedBytes = exp.file.bytes;
  let file;
  try {
    file = await downloadToFile(api, exp.download_url, join(options.out, exp.file.name), {
      sha256: exp.file.sha256,
      onProgress: (done, total) => downloading.update(done, Math.max(total ?? expectedBytes, 1), { doneBytes: byteSize(done), totalBytes: byteSize(total ?? expectedBytes) }),
    });
  } finally {
    downloading.stop();
  }
  if (file.bytes !== expectedBytes) throw new CliError(EXIT.api, `the archive of export ${exp.id} has ${file.bytes} bytes but the export says ${expectedBytes}; try again`);
  ctx.out.info(`wrote ${file.path} (${byteSize(file.bytes)}, sha256 ${file.sha256} verified)`);

  if (options.extract) {
    const folder = await extract(file.path, options.out);
    if (folder === null) ctx.out.warn(`--extract: no tar program found on PATH; the archive is ${file.path} (extract it with any tar tool)`);
    else ctx.out.info(`extracted ${folder}`);
  }
  if (ctx.json) ctx.out.apiJson(text);
}

export function registerExport(program: Command, runtime: CliRuntime): void {
  program
    .command("export")
    .description("export a completed run as training data or an audit bundle, download the archive and verify its sha256")
    .argument("<run_id>")
    .addOption(new Option("--format <format>", "lerobot (LeRobot v3.0), rlds (TFDS RLDS) or mcap-bundle (every MCAP and video, manifest, report)").choices(["lerobot", "rlds", "mcap-bundle"]).makeOptionMandatory())
    .option("--out <dir>", "where the archive goes", ".")
    .option("--extract", "unpack the archive there too (needs a tar program)")
    .addHelpText("after", "\nExample:\n  assay export run_... --format lerobot --out datasets/ --extract")
    .action(runtime.action<[string, ExportOptions]>(exportRun));
}

/**
 * `assay episodes <run> [--outcome ...] [--cluster ...] [--stage ...] [--download mcap|video [--out dir]]`: the
 * run's finished episodes (GET /v1/runs/{id}/episodes) as a table, and optionally each listed
 * episode's recording or video, downloaded with the key and checked against its X-Content-SHA256.
 */
import { Option, type Command } from "commander";
import { extname, join } from "node:path";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { downloadToFile } from "../download-file.js";
import { byteSize, seconds, table } from "../human-format.js";

interface Episode {
  id: string;
  index: number;
  outcome: string | null;
  duration_s: number | null;
  failure_cluster: string | null;
  cell: string | null;
  attempts: number;
  mcap_url: string | null;
  video_url: string | null;
  intervened?: boolean;
}

interface EpisodesOptions {
  outcome?: string;
  cluster?: string;
  stage?: string;
  download?: "mcap" | "video";
  out?: string;
}

const DEFAULT_EXTENSION = { mcap: ".mcap", video: ".mp4" } as const;

async function episodes(ctx: CommandContext, runId: string, options: EpisodesOptions) {
  const api = ctx.api();
  const answer = await api.json<{ data: Episode[] }>("GET", `/v1/runs/${encodeURIComponent(runId)}/episodes`, {
    query: { outcome: options.outcome, cluster: options.cluster, stage: options.stage },
  });
  const list = answer.data.data;
  if (ctx.json) ctx.out.apiJson(answer.text);
  else if (list.length === 0) ctx.out.human("no finished episodes match");
  else {
    ctx.out.human(
      table(
        [{ header: "INDEX", align: "right" }, { header: "OUTCOME" }, { header: "CLUSTER" }, { header: "CELL" }, { header: "DURATION", align: "right" }, { header: "ATTEMPTS", align: "right" }],
        list.map((e) => [String(e.index), `${e.outcome ?? "-"}${e.intervened ? " (helped)" : ""}`, e.failure_cluster ?? "-", e.cell ?? "-", seconds(e.duration_s), String(e.attempts)]),
      ),
    );
  }
  if (!options.download) return;
  const kind = options.download;
  const dir = options.out ?? runId;
  let written = 0;
  for (const episode of list) {
    const url = kind === "mcap" ? episode.mcap_url : episode.video_url;
    if (!url) {
      ctx.out.warn(`episode ${episode.index} (${episode.id}) has no ${kind} file yet; skipped`);
      continue;
    }
    const extension = extname(new URL(url).pathname) || DEFAULT_EXTENSION[kind];
    const file = await downloadToFile(api, url, join(dir, `${episode.index}-${episode.id}${extension}`));
    ctx.out.info(`${file.path}  ${byteSize(file.bytes)}${file.verified ? ", sha256 ok" : ""}`);
    written++;
  }
  if (!ctx.json) ctx.out.human(`${written} ${kind} file${written === 1 ? "" : "s"} in ${dir}`);
}

export function registerEpisodes(program: Command, runtime: CliRuntime): void {
  program
    .command("episodes")
    .description("list a run's finished episodes (index, outcome, failure cluster, cell, duration); optionally download their files")
    .argument("<run_id>")
    .option("--outcome <outcome>", "only this outcome (success, failure)")
    .option("--cluster <cluster>", "only failures of this cluster (docs/failures.md)")
    .option("--stage <stage>", "only episodes whose last stage reached is this one (none: no stage reached)")
    .addOption(new Option("--download <kind>", "download each listed episode's file: mcap (the recording) or video (MP4)").choices(["mcap", "video"]))
    .option("--out <dir>", "where downloads go (default ./<run_id>)")
    .addHelpText("after", "\nExample:\n  assay episodes run_... --outcome failure --download mcap --out failures/")
    .action(runtime.action<[string, EpisodesOptions]>(episodes));
}

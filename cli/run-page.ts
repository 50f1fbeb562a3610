/**
 * `assay runs get <id> --web`: the run's page in the web console (`<base URL>/runs/<run_id>`), opened in
 * the user's browser (open-url.ts). Without a terminal on stdout, with `--print-url`, or when no browser
 * can be started, the URL is printed instead, so scripts and remote shells get something to click.
 * The URL carries no key: the console asks for one itself.
 */
import type { CommandContext } from "./command-context.js";
import { openUrl } from "./open-url.js";

export interface WebOptions {
  web?: boolean;
  printUrl?: boolean;
}

export async function openRunPage(ctx: CommandContext, runId: string, options: WebOptions, stdout: NodeJS.WriteStream = process.stdout): Promise<void> {
  const url = ctx.api().url(`/runs/${encodeURIComponent(runId)}`).href;
  if (options.printUrl || !stdout.isTTY) return ctx.out.info(url);
  const result = await openUrl(url, ctx.env);
  if (result.opened) return ctx.out.info(`opened ${url} (${result.by})`);
  ctx.out.warn(`${result.why}; open the run's page yourself:`);
  ctx.out.info(url);
}

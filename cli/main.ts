/**
 * `assay`: the command line for Assay's public /v1 API. Builds the commander program (global
 * --json, --base-url, --key; one module per command under commands/), runs it, and turns every way it
 * can end into an exit code (exit-codes.ts): errors go to stderr as `error: <message>` with
 * `see <doc_url>` for API errors; under --json an API error's envelope is also printed on stdout.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { CliRuntime } from "./command-context.js";
import { registerCompare } from "./commands/compare.js";
import { registerEpisodes } from "./commands/episodes.js";
import { registerExport } from "./commands/export.js";
import { registerKeys } from "./commands/keys.js";
import { registerLeaderboards } from "./commands/leaderboards.js";
import { registerLogin } from "./commands/login.js";
import { registerModels } from "./commands/models.js";
import { registerQuote } from "./commands/quote.js";
import { registerReport } from "./commands/report.js";
import { registerRobots } from "./commands/robots.js";
import { registerRuns } from "./commands/runs.js";
import { registerTasks } from "./commands/tasks.js";
import { registerUsage } from "./commands/usage.js";
import { CliError, EXIT } from "./exit-codes.js";

/** Exit code of an error that is none of the documented ones: a bug in assay itself (sysexits EX_SOFTWARE). */
const EXIT_INTERNAL = 70;

const VERSION = (JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string }).version;

const EXIT_CODES_HELP = `
Settings (the first that is set wins: flags, then the environment, then the stored login):
  --key, ASSAY_API_KEY          the API key (or store one with assay login)
  --base-url, ASSAY_BASE_URL    the coordinator (default http://127.0.0.1:8080)
  assay login                   stores both in $XDG_CONFIG_HOME/assay/config.json (~/.config/assay/config.json),
                                mode 0600; a stored key is sent only to the URL it was stored for
  BROWSER                       what runs get --web opens pages with (else xdg-open, open or start)

Exit codes:
  0  success
  1  the run watched ended failed or stopped
  2  usage error (unknown command or option, missing argument, no API key, unreadable body)
  3  API error (message and doc_url on stderr) or the API cannot be reached`;

export function buildProgram(runtime: CliRuntime): Command {
  const program = new Command("assay")
    .description("Assay from the command line: submit and watch runs, list episodes, fetch reports and exports; models, tasks, keys, leaderboards")
    .version(VERSION, "-V, --version", "print the version")
    .option("--json", "print the API's JSON exactly, nothing else on stdout")
    .option("--base-url <url>", "the API's base URL (default $ASSAY_BASE_URL, else the stored login's, else http://127.0.0.1:8080)")
    .option("--key <key>", "the API key (default $ASSAY_API_KEY, else the stored login's)")
    .helpOption("-h, --help", "show help")
    .exitOverride()
    .showHelpAfterError("(assay --help, or assay <command> --help, shows the usage)")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText("after", EXIT_CODES_HELP);
  registerRobots(program, runtime);
  registerRuns(program, runtime);
  registerEpisodes(program, runtime);
  registerReport(program, runtime);
  registerCompare(program, runtime);
  registerExport(program, runtime);
  registerQuote(program, runtime);
  registerUsage(program, runtime);
  registerModels(program, runtime);
  registerTasks(program, runtime);
  registerKeys(program, runtime);
  registerLeaderboards(program, runtime);
  registerLogin(program, runtime);
  return program;
}

/** Runs `assay` with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  quietOnClosedOutput();
  const runtime = new CliRuntime(env);
  const program = buildProgram(runtime);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return runtime.exitCode;
  } catch (error) {
    return report(error, runtime);
  }
}

/**
 * `assay runs list | head`: once the reader has closed the pipe, nothing more can be shown, so the
 * command ends quietly as Unix tools do instead of dying on EPIPE with a stack trace.
 */
function quietOnClosedOutput(): void {
  if (process.stdout.listenerCount("error") > 0) return;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT.ok);
    throw error;
  });
}

/** Prints an error the way the exit-code table promises and returns its code. */
function report(error: unknown, runtime: CliRuntime): number {
  if (error instanceof CommanderError) {
    // Commander has printed its own message (or the help/version asked for).
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
    return EXIT.usage;
  }
  if (error instanceof CliError) {
    if (runtime.json && error.rawBody !== undefined) process.stdout.write(error.rawBody.endsWith("\n") ? error.rawBody : `${error.rawBody}\n`);
    process.stderr.write(`error: ${error.message}\n`);
    for (const line of error.lines) process.stderr.write(`${line}\n`);
    return error.exitCode;
  }
  process.stderr.write(`error: assay failed unexpectedly (a bug; please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT_INTERNAL;
}

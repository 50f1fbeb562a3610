/**
 * What every command's action gets: whether --json is on, where to print, and the API client (made
 * on first use, so `--help` needs no key). `CliRuntime.action` wraps an action for commander and
 * keeps the exit code it returns for main.ts.
 */
import type { Command } from "commander";
import { ApiClient } from "./api-client.js";
import { resolveApiSettings } from "./api-settings.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

/** Printing under the two modes: people get words and tables; `--json` gets the API's body and nothing else on stdout. */
export class Output {
  constructor(
    readonly json: boolean,
    readonly stdout: NodeJS.WriteStream = process.stdout,
    readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {}

  /** The API's JSON exactly as it came (under --json). */
  apiJson(text: string): void {
    this.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** Human output on stdout; nothing under --json. */
  human(text: string): void {
    if (!this.json) this.stdout.write(`${text}\n`);
  }

  /** A result people and scripts both want (a path written): stdout, or stderr under --json so stdout stays JSON. */
  info(text: string): void {
    (this.json ? this.stderr : this.stdout).write(`${text}\n`);
  }

  /** A warning or note: always stderr. */
  warn(text: string): void {
    this.stderr.write(`${text}\n`);
  }
}

export interface CommandContext {
  json: boolean;
  out: Output;
  /** The API client; a usage error (exit 2) when no key is set. */
  api(): ApiClient;
  /** The API client for public endpoints (leaderboards): sends a key when one is set, works without. */
  publicApi(): ApiClient;
  /** The global --base-url and --key as given (login and whoami show where settings came from). */
  flags: { baseUrl?: string; key?: string };
  /** The process's environment (the one place it is read: main.ts hands it in). */
  env: NodeJS.ProcessEnv;
}

interface GlobalOptions {
  json?: boolean;
  baseUrl?: string;
  key?: string;
}

export class CliRuntime {
  exitCode: ExitCode = EXIT.ok;
  /** Whether the command being run asked for --json (for how main.ts reports an error). */
  json = false;

  constructor(readonly env: NodeJS.ProcessEnv) {}

  contextOf(command: Command): CommandContext {
    const globals = command.optsWithGlobals<GlobalOptions>();
    const json = globals.json === true;
    this.json = json;
    const out = new Output(json);
    const flags = { baseUrl: globals.baseUrl, key: globals.key };
    const clientOf = (keyOptional: boolean) => {
      const settings = resolveApiSettings(flags, this.env, { keyOptional });
      for (const warning of settings.warnings ?? []) out.warn(warning);
      return new ApiClient(settings);
    };
    let client: ApiClient | undefined;
    let publicClient: ApiClient | undefined;
    return {
      json,
      out,
      api: () => (client ??= clientOf(false)),
      publicApi: () => (publicClient ??= clientOf(true)),
      flags,
      env: this.env,
    };
  }

  /**
   * A commander action running `fn` with the context, the command's arguments and options. A returned
   * exit code is kept for main.ts; errors propagate to it.
   */
  action<A extends unknown[]>(fn: (context: CommandContext, ...args: A) => Promise<ExitCode | void>): (...raw: unknown[]) => Promise<void> {
    return async (...raw: unknown[]) => {
      const command = raw[raw.length - 1] as Command;
      const code = await fn(this.contextOf(command), ...(raw.slice(0, -1) as A));
      if (code !== undefined) this.exitCode = code;
    };
  }
}

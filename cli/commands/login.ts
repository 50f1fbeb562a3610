/**
 * `assay login|logout|whoami`. login asks for the base URL and the API key (typed without echo at a
 * terminal, or piped with --key-stdin), checks the key with GET /v1/keys/current and stores both
 * (stored-login.ts, mode 0600); logout removes the stored file; whoami says which URL and key the
 * next command would use, where each came from, and what the key may do. The key is never printed:
 * only its first characters (`asy_live_abcd…`).
 */
import type { Command } from "commander";
import { ApiClient } from "../api-client.js";
import { DEFAULT_BASE_URL, keyPrefix, parseBaseUrl, resolveApiSettings } from "../api-settings.js";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { CliError, usageError } from "../exit-codes.js";
import { fields, localTime } from "../human-format.js";
import { readStoredLogin, removeStoredLogin, writeStoredLogin } from "../stored-login.js";
import { promptLine, promptSecret, readPipedSecret } from "../terminal-prompt.js";

/** GET /v1/keys/current: the calling key (never its secret), its account, whether it is the operator's. */
interface CurrentKey {
  id: string;
  scope: string[];
  hint: string;
  created: string;
  account: { id: string; name: string };
  operator: boolean;
}

interface LoginOptions {
  url?: string;
  keyStdin?: boolean;
}

const origin = (url: URL) => url.href.replace(/\/$/, "");

async function readKey(ctx: CommandContext, options: LoginOptions, interactive: boolean): Promise<string> {
  if (options.keyStdin) {
    if (process.stdin.isTTY) throw usageError("--key-stdin reads the key from a pipe, but stdin is a terminal: leave --key-stdin out to type the key, or pipe it (echo \"$KEY\" | assay login --key-stdin)");
    return readPipedSecret();
  }
  if (ctx.flags.key !== undefined) {
    ctx.out.warn("note: a key given with --key shows in your shell history and to other users in ps; typing it at the prompt or piping it with --key-stdin does not");
    return ctx.flags.key;
  }
  if (!interactive) {
    throw usageError("no terminal to type the API key at: pipe it with --key-stdin, e.g. echo \"$ASSAY_API_KEY\" | assay login --url http://127.0.0.1:8080 --key-stdin");
  }
  return promptSecret("API key (asy_live_..., not shown as you type): ");
}

async function login(ctx: CommandContext, options: LoginOptions) {
  const interactive = process.stdin.isTTY === true && !options.keyStdin;
  const stored = readStoredLogin(ctx.env);
  const suggested = ctx.env.ASSAY_BASE_URL || stored?.login.base_url.replace(/\/$/, "") || DEFAULT_BASE_URL;
  const given = options.url ?? ctx.flags.baseUrl;
  const baseUrl = parseBaseUrl(given ?? (interactive ? await promptLine("Assay API URL", suggested) : suggested));
  const key = await readKey(ctx, options, interactive);
  if (!key) throw usageError("the API key is empty: nothing was stored");
  if (!key.startsWith("asy_live_")) throw usageError("that is not an Assay API key: keys start with asy_live_ (what was given is not quoted here, in case it is another secret); nothing was stored");

  let answer;
  try {
    answer = await new ApiClient({ baseUrl, key }).json<CurrentKey>("GET", "/v1/keys/current");
  } catch (error) {
    if (error instanceof CliError) throw new CliError(error.exitCode, `${error.message}; nothing was stored`, { lines: error.lines, envelope: error.envelope, rawBody: error.rawBody, unreachable: error.unreachable, cause: error });
    throw error;
  }
  const current = answer.data;
  const path = await writeStoredLogin(ctx.env, { base_url: baseUrl.href, api_key: key, saved: new Date().toISOString() });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  ctx.out.human(`logged in to ${origin(baseUrl)} as ${current.account.name} (${current.account.id}) with key ${keyPrefix(key)} (${current.id}; ${current.scope.join(", ")})`);
  ctx.out.human(`stored in ${path} (readable only by you); assay logout removes it`);
  if (ctx.env.ASSAY_API_KEY || ctx.env.ASSAY_BASE_URL) {
    ctx.out.warn("note: ASSAY_API_KEY or ASSAY_BASE_URL is set in this environment and wins over the stored login (assay whoami shows what is used)");
  }
}

async function logout(ctx: CommandContext) {
  const path = await removeStoredLogin(ctx.env);
  if (ctx.json) return ctx.out.apiJson(JSON.stringify({ removed: path ?? null }));
  ctx.out.human(path ? `removed the stored login ${path}; the key itself still works until revoked (assay keys revoke <key_id>)` : "no stored login to remove");
  if (ctx.env.ASSAY_API_KEY) ctx.out.warn("note: ASSAY_API_KEY is still set in this environment, and assay still uses it");
}

async function whoami(ctx: CommandContext) {
  const settings = resolveApiSettings(ctx.flags, ctx.env);
  for (const warning of settings.warnings ?? []) ctx.out.warn(warning);
  const answer = await new ApiClient(settings).json<CurrentKey>("GET", "/v1/keys/current");
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const k = answer.data;
  const from = (source: string | undefined) => (source ? ` (from ${source === "flag" ? "the command line" : source === "environment" ? "the environment" : source === "default" ? "the default" : "the stored login"})` : "");
  ctx.out.human(
    fields([
      ["api", `${origin(settings.baseUrl)}${from(settings.sources?.baseUrl)}`],
      ["key", `${keyPrefix(settings.key)} ${k.id}${from(settings.sources?.key)}`],
      ["account", `${k.account.name} (${k.account.id})${k.operator ? ", the operator account" : ""}`],
      ["scopes", k.scope.join(", ")],
      ["created", localTime(k.created)],
    ]),
  );
}

export function registerLogin(program: Command, runtime: CliRuntime): void {
  program
    .command("login")
    .description("store the API's URL and your key for later commands (checked with GET /v1/keys/current; file mode 0600)")
    .option("--url <url>", `the API's base URL (asked for at a terminal; default $ASSAY_BASE_URL, the stored one, or ${DEFAULT_BASE_URL})`)
    .option("--key-stdin", "read the key from stdin (a pipe) instead of asking for it")
    .addHelpText("after", "\nExamples:\n  assay login                                   (asks for the URL and the key; the key is not shown)\n  echo \"$KEY\" | assay login --url https://assay.example.com --key-stdin")
    .action(runtime.action<[LoginOptions]>(login));

  program.command("logout").description("remove the stored login (the key is not revoked)").action(runtime.action<[]>(logout));

  program
    .command("whoami")
    .description("which API and key assay uses (and where each came from), the key's account and scopes")
    .action(runtime.action<[]>(whoami));
}

/**
 * `assay keys list|create|revoke`: the account's API keys (GET, POST /v1/keys, DELETE /v1/keys/{id};
 * keys:admin). A created key's secret is printed once, as the API returns it, with a warning on stderr
 * that it is never shown again; lists show only each key's hint.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { localTime, table } from "../human-format.js";

export interface Key {
  id: string;
  object: "key";
  scope: string[];
  hint: string;
  created: string;
  revoked: string | null;
  secret?: string;
}

const SCOPES = ["runs:read", "runs:write", "streams:read", "data:purge", "keys:admin", "calibration:export"];

/** `--scope runs:read,runs:write` (repeatable); the API checks the names and says which it does not know. */
function scopeList(value: string, previous: string[] = []): string[] {
  const scopes = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (scopes.length === 0) throw new InvalidArgumentError(`name at least one scope: ${SCOPES.join(", ")}.`);
  return [...previous, ...scopes];
}

async function list(ctx: CommandContext) {
  const answer = await ctx.api().json<{ data: Key[] }>("GET", "/v1/keys");
  if (ctx.json) return ctx.out.apiJson(answer.text);
  ctx.out.human(
    table(
      [{ header: "KEY" }, { header: "HINT" }, { header: "SCOPES" }, { header: "CREATED" }, { header: "REVOKED" }],
      answer.data.data.map((k) => [k.id, k.hint, k.scope.join(","), localTime(k.created), k.revoked ? localTime(k.revoked) : "-"]),
    ),
  );
}

async function create(ctx: CommandContext, options: { scope: string[] }) {
  const answer = await ctx.api().json<Key>("POST", "/v1/keys", { body: JSON.stringify({ scope: options.scope }) });
  ctx.out.warn("the secret below is shown this once and never again: store it now (e.g. in your CI's secret store)");
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const k = answer.data;
  ctx.out.human(`created ${k.id} (${k.scope.join(", ")})`);
  ctx.out.human(`secret  ${k.secret}`);
}

async function revoke(ctx: CommandContext, id: string) {
  const answer = await ctx.api().json<Key>("DELETE", `/v1/keys/${encodeURIComponent(id)}`);
  if (ctx.json) return ctx.out.apiJson(answer.text);
  ctx.out.human(`${answer.data.id} (${answer.data.hint}) revoked at ${localTime(answer.data.revoked)}; requests with it now get invalid_api_key`);
}

export function registerKeys(program: Command, runtime: CliRuntime): void {
  const keys = program.command("keys").description("list, create and revoke the account's API keys (needs keys:admin)");

  keys.command("list").description("the account's keys, never their secrets (GET /v1/keys)").action(runtime.action<[]>(list));

  keys
    .command("create")
    .description("create a key (POST /v1/keys); its secret is printed once")
    .requiredOption("--scope <scopes>", `comma-separated scopes, from ${SCOPES.join(", ")} (at most the scopes of the key you use)`, scopeList)
    .addHelpText("after", "\nExample:\n  assay keys create --scope runs:read,runs:write")
    .action(runtime.action<[{ scope: string[] }]>(create));

  keys
    .command("revoke")
    .description("revoke a key (DELETE /v1/keys/{id}); a key cannot revoke itself")
    .argument("<key_id>")
    .action(runtime.action<[string]>(revoke));
}

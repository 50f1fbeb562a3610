/**
 * The settings `assay login` stores: the base URL and the API key, in
 * `$XDG_CONFIG_HOME/assay/config.json` (else `~/.config/assay/config.json`), the folder 0700 and the
 * file 0600, written to a temporary file of that mode and renamed over the old one so no other user can
 * read it even for a moment. Nothing here prints the key: messages name the file, never its contents.
 */
import { readFileSync, statSync } from "node:fs";
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { usageError } from "./exit-codes.js";

export interface StoredLogin {
  /** The coordinator the key belongs to (normalised, ending in "/"). */
  base_url: string;
  api_key: string;
  /** When `assay login` stored it (ISO 8601). */
  saved: string;
}

/** Where the stored login lives: `$XDG_CONFIG_HOME/assay/config.json`, else `~/.config/assay/config.json`. */
export function loginPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), ".config");
  return join(base, "assay", "config.json");
}

export interface ReadLogin {
  login: StoredLogin;
  path: string;
  /** Set when the file can be read by other users (its mode is wider than 0600): a warning to show. */
  warning?: string;
}

/** The stored login (read synchronously: a few hundred bytes, once per command), or undefined when there is none; a usage error (exit 2) when the file is unreadable or malformed. */
export function readStoredLogin(env: NodeJS.ProcessEnv): ReadLogin | undefined {
  const path = loginPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw usageError(`cannot read the stored login ${path}: ${code === "EACCES" ? "permission denied" : (error as Error).message}`);
  }
  let parsed: Partial<StoredLogin> | undefined;
  try {
    parsed = JSON.parse(text) as Partial<StoredLogin>;
  } catch {
    parsed = undefined;
  }
  // The file's text is never quoted: it holds the key.
  if (!parsed || typeof parsed !== "object" || typeof parsed.base_url !== "string" || typeof parsed.api_key !== "string") {
    throw usageError(`the stored login ${path} is not what assay login writes (a JSON object with base_url and api_key); run assay login again, or assay logout to remove it`);
  }
  const mode = statSync(path).mode & 0o777;
  const warning = (mode & 0o077) !== 0 ? `warning: ${path} can be read by other users (mode ${mode.toString(8).padStart(4, "0")}); chmod 600 ${path}` : undefined;
  return { login: { base_url: parsed.base_url, api_key: parsed.api_key, saved: String(parsed.saved ?? "") }, path, warning };
}

/** Stores the login (folder 0700, file 0600); returns the file's path. */
export async function writeStoredLogin(env: NodeJS.ProcessEnv, login: StoredLogin): Promise<string> {
  const path = loginPath(env);
  const dir = dirname(path);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // The assay folder is ours: narrow it even when it existed with a wider mode.
    await chmod(dir, 0o700);
    await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600, flag: "w" });
    await chmod(temporary, 0o600);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw usageError(`cannot store the login in ${path}: ${(error as NodeJS.ErrnoException).code === "EACCES" ? "permission denied" : (error as Error).message}`);
  }
  return path;
}

/** Removes the stored login; returns its path, or undefined when there was none. */
export async function removeStoredLogin(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const path = loginPath(env);
  try {
    await rm(path);
    return path;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw usageError(`cannot remove the stored login ${path}: ${(error as Error).message}`);
  }
}

/**
 * Where the API is and which key to send. The one place `assay` reads its settings, in this order
 * (the first that is set wins):
 *
 *   1. the flags `--base-url` and `--key`;
 *   2. the environment, `ASSAY_BASE_URL` and `ASSAY_API_KEY`;
 *   3. the login `assay login` stored (stored-login.ts);
 *   4. for the URL only, http://127.0.0.1:8080 (what `npm start` serves).
 *
 * A stored key is sent only to the URL it was stored for: with another URL from a flag or the
 * environment, the stored key is left out (and the error says so), so a key never reaches a server
 * it was not given for.
 */
import { usageError } from "./exit-codes.js";
import { readStoredLogin } from "./stored-login.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/** Where a setting came from, for `assay whoami`. */
export type SettingSource = "flag" | "environment" | "stored login" | "default";

export interface ApiSettings {
  /** The coordinator's base URL, always ending in "/" so paths resolve under any prefix. */
  baseUrl: URL;
  /** The API key; undefined only when resolved with `keyOptional` and none is set. */
  key: string;
  /** Where the URL and the key came from. */
  sources?: { baseUrl: SettingSource; key: SettingSource | "none" };
  /** Notes to show on stderr (a stored login readable by others). */
  warnings?: string[];
}

export interface ApiFlags {
  baseUrl?: string;
  key?: string;
}

/** The URL checked to be http(s), ending in "/"; a usage error (exit 2) otherwise. */
export function parseBaseUrl(rawUrl: string): URL {
  let baseUrl: URL;
  try {
    baseUrl = new URL(rawUrl);
  } catch {
    throw usageError(`the base URL must be an http(s) URL such as ${DEFAULT_BASE_URL}; got ${JSON.stringify(rawUrl.slice(0, 200))}`);
  }
  if (baseUrl.protocol !== "http:" && baseUrl.protocol !== "https:") {
    throw usageError(`the base URL must be an http(s) URL such as ${DEFAULT_BASE_URL}; got ${JSON.stringify(rawUrl.slice(0, 200))}`);
  }
  if (baseUrl.username || baseUrl.password) throw usageError("the base URL must not carry a user name or password; the API key is the credential");
  if (!baseUrl.pathname.endsWith("/")) baseUrl.pathname += "/";
  baseUrl.search = "";
  baseUrl.hash = "";
  return baseUrl;
}

/** How a key is shown: its first characters and an ellipsis (`asy_live_abcd…`), never the whole secret. */
export function keyPrefix(key: string): string {
  const shown = key.startsWith("asy_live_") ? 13 : 4;
  return `${key.slice(0, Math.min(shown, Math.floor(key.length / 2)))}…`;
}

/**
 * The settings from flags over the environment over the stored login; a usage error (exit 2) when
 * there is no key (unless `keyOptional`, for public endpoints) or the URL is not http(s).
 */
export function resolveApiSettings(flags: ApiFlags, env: NodeJS.ProcessEnv, options: { keyOptional?: boolean } = {}): ApiSettings {
  // The stored login is read only when flags and environment leave something open, so a broken file
  // never gets in the way of a command that does not need it.
  const needsStored = (flags.baseUrl === undefined && !env.ASSAY_BASE_URL) || (flags.key === undefined && !env.ASSAY_API_KEY);
  const stored = needsStored ? readStoredLogin(env) : undefined;
  const warnings = stored?.warning ? [stored.warning] : [];
  const [rawUrl, urlSource]: [string, SettingSource] =
    flags.baseUrl !== undefined ? [flags.baseUrl, "flag"]
    : env.ASSAY_BASE_URL ? [env.ASSAY_BASE_URL, "environment"]
    : stored ? [stored.login.base_url, "stored login"]
    : [DEFAULT_BASE_URL, "default"];
  const baseUrl = parseBaseUrl(rawUrl);
  const storedFits = stored !== undefined && sameUrl(stored.login.base_url, baseUrl);
  const [key, keySource]: [string | undefined, SettingSource | "none"] =
    flags.key !== undefined ? [flags.key, "flag"]
    : env.ASSAY_API_KEY ? [env.ASSAY_API_KEY, "environment"]
    : storedFits ? [stored.login.api_key, "stored login"]
    : [undefined, "none"];
  if (!key && !options.keyOptional) {
    const lines = stored && !storedFits
      ? [`the stored login (${stored.path}) is for ${stored.login.base_url.replace(/\/$/, "")}, not ${baseUrl.href.replace(/\/$/, "")}: its key is sent only there`]
      : [];
    throw usageError("no API key: export ASSAY_API_KEY=asy_live_... (npm start prints the admin key on its first start), pass --key, or run assay login", [
      ...lines,
      "run assay --help for usage",
    ]);
  }
  return { baseUrl, key: key ?? "", sources: { baseUrl: urlSource, key: keySource }, warnings };
}

function sameUrl(stored: string, baseUrl: URL): boolean {
  try {
    return parseBaseUrl(stored).href === baseUrl.href;
  } catch {
    return false;
  }
}

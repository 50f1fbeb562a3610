/**
 * Where the API is and which key to send. The one place `assay` reads its environment:
 * `ASSAY_BASE_URL` (default http://127.0.0.1:8080, what `npm start` serves) and `ASSAY_API_KEY`;
 * the `--base-url` and `--key` flags override them.
 */
import { usageError } from "./exit-codes.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

export interface ApiSettings {
  /** The coordinator's base URL, always ending in "/" so paths resolve under any prefix. */
  baseUrl: URL;
  key: string;
}

export interface ApiFlags {
  baseUrl?: string;
  key?: string;
}

/** The settings from flags over the environment; a usage error (exit 2) when there is no key or the URL is not http(s). */
export function resolveApiSettings(flags: ApiFlags, env: NodeJS.ProcessEnv): ApiSettings {
  const rawUrl = flags.baseUrl ?? (env.ASSAY_BASE_URL || DEFAULT_BASE_URL);
  let baseUrl: URL;
  try {
    baseUrl = new URL(rawUrl);
  } catch {
    throw usageError(`the base URL must be an http(s) URL such as ${DEFAULT_BASE_URL}; got ${JSON.stringify(rawUrl)}`);
  }
  if (baseUrl.protocol !== "http:" && baseUrl.protocol !== "https:") {
    throw usageError(`the base URL must be an http(s) URL such as ${DEFAULT_BASE_URL}; got ${JSON.stringify(rawUrl)}`);
  }
  if (!baseUrl.pathname.endsWith("/")) baseUrl.pathname += "/";
  const key = flags.key ?? env.ASSAY_API_KEY;
  if (!key) {
    throw usageError("no API key: export ASSAY_API_KEY=asy_live_... (npm start prints the admin key on its first start), or pass --key", [
      "run assay --help for usage",
    ]);
  }
  return { baseUrl, key };
}

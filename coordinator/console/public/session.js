/**
 * The signed-in key and what it may do. The key lives in sessionStorage only (this tab, until it
 * closes or the user signs out); it is never put in a URL or logged.
 *
 * What a key may do: with keys:admin, GET /v1/keys lists the account's keys and the console finds its
 * own by its hint (the secret's first characters), which gives its exact scopes. Without keys:admin
 * the console probes: GET /v1/runs?limit=1 (runs:read) and GET /v1/streams/- (streams:read: 404 for
 * the made-up cell when held, 403 insufficient_scope when not). Operators (technician pages) are keys
 * that may list the fleet: GET /v1/cells answers them 200.
 */
import { api, ApiError } from "./api.js";

const STORAGE_KEY = "assay.apiKey";

let capabilities = null;

/** The key of this tab's session, or null. */
export function sessionKey() {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Forgets the key and what it could do. */
export function signOut() {
  sessionStorage.removeItem(STORAGE_KEY);
  capabilities = null;
}

async function allowed(path, key) {
  try {
    await api(path, { key });
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "insufficient_scope") return false;
    if (error instanceof ApiError && error.code === "not_found") return true;
    throw error;
  }
}

/**
 * What `key` may do: `{keyId, hint, scopes: Set, exact, operator}`. `exact` is false when the scopes
 * were probed (runs:write, data:purge and calibration:export cannot be probed without side effects,
 * so they are assumed and the API's 403 says otherwise). Throws ApiError invalid_api_key for a bad key.
 */
export async function detectCapabilities(key) {
  let keys = null;
  try {
    keys = await api("/v1/keys", { key });
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "insufficient_scope")) throw error;
  }
  const mine = keys ? keys.data.filter((k) => !k.revoked && key.startsWith(k.hint.replace(/…$/, ""))) : [];
  if (mine.length > 0) {
    // Two keys sharing a hint (6 random characters) is unlikely; then the union is shown and the API decides.
    const scopes = new Set(mine.flatMap((k) => k.scope));
    const operator = await allowed("/v1/cells", key);
    return { keyId: mine.length === 1 ? mine[0].id : null, hint: mine[0].hint, scopes, exact: mine.length === 1, operator };
  }
  const scopes = new Set(["runs:write", "data:purge", "calibration:export"]);
  if (keys) scopes.add("keys:admin");
  if (await allowed("/v1/runs?limit=1", key)) scopes.add("runs:read");
  if (await allowed("/v1/streams/-", key)) scopes.add("streams:read");
  const operator = keys ? await allowed("/v1/cells", key) : false;
  return { keyId: null, hint: null, scopes, exact: false, operator };
}

/** Checks `key`, then keeps it for this tab's session. Throws ApiError when the key is refused. */
export async function signIn(key) {
  capabilities = await detectCapabilities(key);
  sessionStorage.setItem(STORAGE_KEY, key);
  return capabilities;
}

/** What the session's key may do (detected once per page load); null when signed out. */
export async function currentCapabilities() {
  const key = sessionKey();
  if (!key) return null;
  capabilities ??= await detectCapabilities(key);
  return capabilities;
}

/** True when the key holds `scope` (or may hold it: probed keys assume what cannot be probed). */
export function can(caps, scope) {
  return Boolean(caps?.scopes.has(scope));
}

/** Where a key lands after signing in: customers on their runs, technicians (operator keys that cannot submit) on the fleet. */
export function homeOf(caps) {
  return can(caps, "runs:write") || !caps?.operator ? "/runs" : "/fleet";
}

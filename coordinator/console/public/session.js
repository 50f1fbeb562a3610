/**
 * The signed-in key and what it may do. The key lives in sessionStorage only (this tab, until it
 * closes or the user signs out); it is never put in a URL or logged.
 *
 * What a key may do comes from GET /v1/keys/current (any valid key): its exact scopes, its account,
 * and whether it is an operator's (technician pages). Nothing is probed.
 */
import { api } from "./api.js";

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

/**
 * What `key` may do: `{keyId, hint, scopes: Set, exact, operator, account}`. Throws ApiError
 * invalid_api_key for a bad key.
 */
export async function detectCapabilities(key) {
  const me = await api("/v1/keys/current", { key });
  return { keyId: me.id, hint: me.hint, scopes: new Set(me.scope), exact: true, operator: me.operator, account: me.account };
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

/** True when the key holds `scope`. */
export function can(caps, scope) {
  return Boolean(caps?.scopes.has(scope));
}

/** Where a key lands after signing in: customers on their runs, technicians (operator keys that cannot submit) on the fleet. */
export function homeOf(caps) {
  return can(caps, "runs:write") || !caps?.operator ? "/runs" : "/fleet";
}

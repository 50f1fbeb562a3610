/**
 * Every authenticated route and the scopes that admit it: the one table `authorize` enforces and
 * docs/api.md reproduces. A key needs ANY ONE of the listed scopes. A /v1 request matching no row
 * is a 404 not_found (after authentication), so a route cannot be added without a scope.
 */
import { SCOPES, type Scope } from "./scopes.js";

export interface RouteScope {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Express-style path; `:name` matches one segment. */
  path: string;
  scopes: readonly Scope[];
  /** Set on ANY_KEY_ROUTES: any valid key is admitted (`scopes` then lists every scope). */
  anyKey?: true;
  /** Set on PUBLIC_ROUTES: no key at all (public data, rate-limited per client address). */
  public?: true;
}

export const ROUTE_SCOPES: readonly RouteScope[] = [
  { method: "GET", path: "/v1/robots", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/environments", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/environments/:environmentId", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/runs", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/runs", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/runs/:runId", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/runs/:runId", scopes: ["runs:write"] },
  { method: "POST", path: "/v1/runs/:runId/cancel", scopes: ["runs:write"] },
  { method: "POST", path: "/v1/runs/:runId/complete-without-recordings", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/runs/:runId/episodes", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/runs/:runId/episodes/:episodeId/series", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/runs/:runId/episodes/:episodeId/thumbnail", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/runs/:runId/episodes/:episodeId/replay", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/runs/:runId/events", scopes: ["runs:read", "streams:read"] },
  { method: "POST", path: "/v1/keys", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/keys", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/tasks", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/tasks", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/tasks/:taskId", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/tasks/:taskId/pilot", scopes: ["runs:write"] },
  { method: "POST", path: "/v1/tasks/:taskId/amend", scopes: ["runs:write"] },
  { method: "POST", path: "/v1/tasks/:taskId/freeze", scopes: ["runs:write"] },
  { method: "POST", path: "/v1/tasks/:taskId/revise", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/signing-keys", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/signing-keys/:keyId", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/kits", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/kits", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/kits/:kitId", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/kits/:kitId/shipping-label", scopes: ["runs:read"] },
  // Technician operations; kits.ts also requires the key to belong to the operator account.
  { method: "POST", path: "/v1/kits/:kitId/receive", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/kits/:kitId/track", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/kits/:kitId/make-available", scopes: ["keys:admin"] },
  { method: "DELETE", path: "/v1/keys/:keyId", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/runs/:runId/result", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/quote", scopes: ["runs:read", "runs:write"] },
  { method: "PUT", path: "/v1/budgets", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/usage", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/webhooks", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/webhooks", scopes: ["keys:admin"] },
  { method: "DELETE", path: "/v1/webhooks/:endpointId", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/webhooks/:endpointId/deliveries", scopes: ["keys:admin"] },
  { method: "DELETE", path: "/v1/data/:runId", scopes: ["data:purge"] },
  // Fleet operations; cells.ts also requires the key to belong to an operator account.
  { method: "POST", path: "/v1/cells", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/cells", scopes: ["keys:admin"] },
  { method: "DELETE", path: "/v1/cells/:cellId", scopes: ["keys:admin"] },
  // The operator station (cells.ts also requires the operator account).
  { method: "GET", path: "/v1/cells/:cellId", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/cells/:cellId/scene-ready", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/cells/:cellId/label", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/cells/:cellId/abort", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/cells/:cellId/intervene", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/cells/:cellId/intervene-done", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/cells/:cellId/invalidate-previous", scopes: ["keys:admin"] },
  { method: "GET", path: "/v1/runs/:runId/report", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/comparisons", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/runs/:runId/paper/:file", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/paper/:file", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/runs/:runId/export", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/runs/:runId/exports", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/exports/:exportId", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/streams/:cellId", scopes: ["streams:read"] },
  { method: "POST", path: "/v1/calibration/exports", scopes: ["calibration:export"] },
  { method: "GET", path: "/v1/calibration/exports", scopes: ["calibration:export"] },
  { method: "GET", path: "/v1/calibration/exports/:calibrationExportId", scopes: ["calibration:export"] },
  { method: "POST", path: "/v1/runs/:runId/checkpoints", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/account", scopes: ["keys:admin"] },
  { method: "PUT", path: "/v1/account", scopes: ["keys:admin"] },
  { method: "POST", path: "/v1/models", scopes: ["runs:write"] },
  { method: "PUT", path: "/v1/models/:modelId/content", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/models", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/models/:modelId", scopes: ["runs:read"] },
  { method: "DELETE", path: "/v1/models/:modelId", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/suites", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/suites/:suiteId", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/gates", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/gates", scopes: ["runs:read"] },
  { method: "GET", path: "/v1/gates/:gateId", scopes: ["runs:read"] },
  { method: "POST", path: "/v1/gates/:gateId/checks", scopes: ["runs:write"] },
  { method: "GET", path: "/v1/gates/:gateId/checks/:checkId", scopes: ["runs:read"] },
  { method: "GET", path: "/artifacts/runs/:runId/episodes/:episodeId/:fileName", scopes: ["runs:read"] },
  { method: "GET", path: "/artifacts/exports/:exportId/:fileName", scopes: ["runs:read"] },
  { method: "GET", path: "/artifacts/calibration-exports/:calibrationExportId/:fileName", scopes: ["calibration:export"] },
];

/** Routes any valid key may call, whatever its scopes (a key always holds at least one). */
export const ANY_KEY_ROUTES: readonly RouteScope[] = [
  { method: "GET", path: "/v1/keys/current", scopes: SCOPES, anyKey: true },
  // Fitted priors only, no account's data (docs/statistics.md, "The prior learns from the fleet").
  { method: "GET", path: "/v1/statistics/priors", scopes: SCOPES, anyKey: true },
];

/** Routes anyone may call without a key: the OpenAPI document and published leaderboards (docs/api.md). */
export const PUBLIC_ROUTES: readonly RouteScope[] = [
  { method: "GET", path: "/v1/openapi.json", scopes: [], public: true },
  { method: "GET", path: "/v1/leaderboards", scopes: [], public: true },
  { method: "GET", path: "/v1/leaderboards/:leaderboardId", scopes: [], public: true },
  { method: "GET", path: "/v1/leaderboards/:leaderboardId/entries/:runId/report", scopes: [], public: true },
];

interface CompiledRoute extends RouteScope {
  pattern: RegExp;
}

const COMPILED: CompiledRoute[] = [...ROUTE_SCOPES, ...ANY_KEY_ROUTES, ...PUBLIC_ROUTES].map((route) => ({
  ...route,
  pattern: new RegExp(
    "^" + route.path.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/") + "/?$",
  ),
}));

/** The table row for a request, or undefined when no route matches. HEAD is treated as GET. */
export function findRouteScope(method: string, path: string): RouteScope | undefined {
  const verb = method === "HEAD" ? "GET" : method;
  return COMPILED.find((route) => route.method === verb && route.pattern.test(path));
}

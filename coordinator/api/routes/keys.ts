/** POST /v1/keys and GET /v1/keys (scope keys:admin). Secrets appear once, in the creation response. */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { createApiKey, keyView } from "../../auth/api-keys.js";
import { isScope, SCOPES, type Scope } from "../../auth/scopes.js";
import { AssayError } from "../../errors/assay-error.js";
import { listKeys } from "../../store/keys-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";

function parseScopes(body: unknown): Scope[] {
  const invalid = (message: string) => new AssayError("contract_validation_failed", message);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid(`request body must be a JSON object {"scope": [...]}`);
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== "scope") throw invalid(`unknown field ${key}; allowed: scope`);
  }
  const scope = record.scope;
  if (!Array.isArray(scope) || scope.length === 0) throw invalid(`scope is required: a non-empty array of ${SCOPES.join(", ")}; got ${JSON.stringify(scope) ?? "undefined"}`);
  for (const value of scope) {
    if (!isScope(value)) throw invalid(`scope: unknown scope ${JSON.stringify(value)}; allowed: ${SCOPES.join(", ")}`);
  }
  return [...new Set(scope as Scope[])];
}

export function keysRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.post("/keys", (req, res) => {
    const scope = parseScopes(req.body);
    const { row, secret } = createApiKey(deps.db, authOf(res).accountId, scope, deps.clock());
    res.status(201).json(keyView(row, secret));
  });

  router.get("/keys", (_req, res) => {
    res.json({ object: "list", url: "/v1/keys", data: listKeys(deps.db, authOf(res).accountId).map((row) => keyView(row)) });
  });

  return router;
}

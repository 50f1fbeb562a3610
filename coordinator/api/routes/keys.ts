/**
 * POST /v1/keys, GET /v1/keys and DELETE /v1/keys/{key_id} (scope keys:admin). Secrets appear once,
 * in the creation response. A revoked key is refused (401) from the next request on.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { createApiKey, keyView } from "../../auth/api-keys.js";
import { isScope, SCOPES, type Scope } from "../../auth/scopes.js";
import { AssayError } from "../../errors/assay-error.js";
import { listKeys, revokeKey } from "../../store/keys-repo.js";
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

  router.delete("/keys/:keyId", (req, res) => {
    const auth = authOf(res);
    const { keyId } = req.params;
    if (keyId === auth.keyId) {
      throw new AssayError("contract_validation_failed", `a key cannot revoke itself (${keyId}); revoke it with another keys:admin key, so an account is never left without an admin key by mistake`);
    }
    const found = () => listKeys(deps.db, auth.accountId).find((row) => row.id === keyId);
    if (!found()) throw new AssayError("not_found", `no API key ${JSON.stringify(keyId)} on this account`);
    // Revoking an already revoked key changes nothing and shows the original timestamp.
    revokeKey(deps.db, keyId, deps.clock().toISOString());
    res.json(keyView(found()!));
  });

  return router;
}

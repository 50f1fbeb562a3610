/**
 * POST /v1/keys, GET /v1/keys and DELETE /v1/keys/{key_id} (scope keys:admin). Secrets appear once,
 * in the creation response. A new key's scopes are a subset of its creator's. GET /v1/keys/current
 * (any valid key) describes the calling key, so a client learns what it may do without trying. A revoked key is refused (401) from the next request on.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { createApiKey, keyView } from "../../auth/api-keys.js";
import { AssayError } from "../../errors/assay-error.js";
import { listKeys } from "../../store/keys-repo.js";
import { getAccount } from "../../store/accounts-repo.js";
import { CATALOG_ACCOUNT_ID } from "../../tasks/task-catalog.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { CreateKeyRequest } from "../schemas/keys.js";
import { parseBody } from "../validate-request.js";

export function keysRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.post("/keys", async (req, res) => {
    const auth = authOf(res);
    const scope = [...new Set(parseBody(CreateKeyRequest, req.body).scope)];
    // A key mints only what it holds: keys:admin alone must not become every scope.
    const beyond = scope.filter((s) => !auth.scope.includes(s));
    if (beyond.length > 0) {
      throw new AssayError("insufficient_scope", `a new key's scopes must be among this key's own (${auth.scope.join(", ")}); it does not hold ${beyond.join(", ")}`);
    }
    const { row, secret } = await createApiKey(deps.db, auth.accountId, scope, deps.clock());
    res.status(201).json(keyView(row, secret));
  });

  router.get("/keys/current", async (_req, res) => {
    const auth = authOf(res);
    const row = (await listKeys(deps.db, auth.accountId)).find((k) => k.id === auth.keyId)!;
    const account = (await getAccount(deps.db, auth.accountId))!;
    res.json({ ...keyView(row), account: { id: account.id, name: account.name }, operator: auth.accountId === CATALOG_ACCOUNT_ID });
  });

  router.get("/keys", async (_req, res) => {
    res.json({ object: "list", url: "/v1/keys", data: (await listKeys(deps.db, authOf(res).accountId)).map((row) => keyView(row)) });
  });

  router.delete("/keys/:keyId", async (req, res) => {
    const auth = authOf(res);
    const { keyId } = req.params;
    if (keyId === auth.keyId) {
      throw new AssayError("contract_validation_failed", `a key cannot revoke itself (${keyId}); revoke it with another keys:admin key, so an account is never left without an admin key by mistake`);
    }
    const found = async () => (await listKeys(deps.db, auth.accountId)).find((row) => row.id === keyId);
    if (!await found()) throw new AssayError("not_found", `no API key ${JSON.stringify(keyId)} on this account`);
    // Revoking an already revoked key changes nothing and shows the original timestamp.
    // Refused from the next request on, on this coordinator and (over NOTIFY) the others on the database.
    await deps.apiKeys.revoke(deps.db, keyId, deps.clock().toISOString());
    // Live views opened with the key (or a token minted for it) close now, not at the next backstop re-check.
    await deps.liveAccess.recheck();
    res.json(keyView((await found())!));
  });

  return router;
}

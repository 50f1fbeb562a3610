/** GET /v1/signing-keys(/{key_id}): the public halves of the keys that sign frozen task specs. */
import { Router } from "express";
import { AssayError } from "../../errors/assay-error.js";
import { ensureServiceKey, getPublicSigningKey, listSigningKeys, signingKeyView } from "../../tasks/signing-keys.js";
import type { CompiledApiDeps } from "../api-deps.js";

export function signingKeysRouter(deps: CompiledApiDeps, router: Router = Router()): Router {

  router.get("/signing-keys", async (_req, res) => {
    await ensureServiceKey(deps.db, deps.clock());
    res.json({ object: "list", url: "/v1/signing-keys", data: (await listSigningKeys(deps.db)).map(signingKeyView) });
  });

  router.get("/signing-keys/:keyId", async (req, res) => {
    const row = await getPublicSigningKey(deps.db, req.params.keyId);
    if (!row) throw new AssayError("not_found", `no signing key ${JSON.stringify(req.params.keyId)}; list them with GET /v1/signing-keys`);
    res.json(signingKeyView(row));
  });

  return router;
}

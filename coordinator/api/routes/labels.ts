/**
 * GET /labels/<kit_id>.pdf?expires=..&sig=..: a kit's shipping label as a PDF, served without bearer
 * authentication to whoever holds a signed link (GET /v1/kits/{kit_id}/shipping-label hands them
 * out). A missing or wrong signature is 403 insufficient_scope; a genuine link past its expiry is
 * 410 retention_expired.
 */
import { Router } from "express";
import { AssayError } from "../../errors/assay-error.js";
import { getKit } from "../../store/kits-repo.js";
import { checkLabelUrl } from "../../kits/label-url.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { queryString } from "../query.js";

export function labelsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.get("/:file", async (req, res) => {
    const match = /^(kit_[A-Za-z0-9]+)\.pdf$/.exec(req.params.file);
    if (!match) throw new AssayError("not_found", `no such label ${JSON.stringify(req.params.file)}; labels are /labels/<kit_id>.pdf`);
    const kitId = match[1]!;
    const now = deps.clock();
    const check = await checkLabelUrl(deps.db, kitId, queryString(req, "expires"), queryString(req, "sig"), now);
    if (check === "bad_signature") {
      throw new AssayError("insufficient_scope", `this label link is not validly signed; get a fresh link from GET /v1/kits/${kitId}/shipping-label`);
    }
    if (check === "expired") {
      throw new AssayError("retention_expired", `this label link expired; links last 24 hours; get a fresh one from GET /v1/kits/${kitId}/shipping-label`);
    }
    const kit = await getKit(deps.db, kitId);
    if (!kit) throw new AssayError("not_found", `no kit ${kitId}`);
    const pdf = await deps.pdf.label(kit, now);
    res.type("application/pdf").set("Cache-Control", "private, no-store").set("Content-Disposition", `inline; filename="${kitId}.pdf"`).send(pdf);
  });

  return router;
}

/** GET /v1/suites, GET /v1/suites/{suite_id}: the frozen benchmark suites kind `eval` runs. */
import { Router } from "express";
import { AssayError } from "../../errors/assay-error.js";
import { findSuite, loadSuites, suiteView } from "../../suites/suites.js";
import type { CompiledApiDeps } from "../api-deps.js";

export function suitesRouter(_deps: CompiledApiDeps, router: Router = Router()): Router {
  router.get("/suites", (_req, res) => {
    res.json({ object: "list", url: "/v1/suites", data: loadSuites().map(suiteView) });
  });
  router.get("/suites/:suiteId", (req, res) => {
    const suite = findSuite(req.params.suiteId);
    if (!suite) throw new AssayError("not_found", `no suite ${JSON.stringify(req.params.suiteId)}; GET /v1/suites lists them`);
    res.json(suiteView(suite));
  });
  return router;
}

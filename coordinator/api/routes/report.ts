/**
 * GET /v1/runs/{run_id}/report (runs:read): the verification report of a completed run, as JSON
 * (default) or, with `format=pdf`, as a PDF. Pilots and runs that have not completed: 404.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { buildReport } from "../../reports/report.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { ReportQuery } from "../schemas/runs.js";
import { parseQuery } from "../validate-request.js";
import { requireRun } from "./runs.js";

export function reportRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.get("/runs/:runId/report", async (req, res) => {
    const run = requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const format = parseQuery(ReportQuery, req).format ?? "json";
    const now = deps.clock();
    const report = buildReport(deps.db, run, deps.urls.baseUrl, now);
    if (format === "json") {
      res.json(report);
      return;
    }
    const pdf = await deps.pdf.report(report, now);
    res.type("application/pdf").set("Content-Disposition", `inline; filename="assay-report-${run.id}.pdf"`).send(pdf);
  });

  return router;
}

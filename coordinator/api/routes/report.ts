/**
 * GET /v1/runs/{run_id}/report (runs:read): the verification report of a completed run, as JSON
 * (default) or, with `format=pdf`, as a PDF. Pilots and runs that have not completed: 404.
 *
 * The PDF (coordinator/reports/report-pdf.ts) adds the run's title, per-unit table, stage funnel,
 * a filmstrip of failures read from the stored recordings, and the methods. A completed run's
 * figures never change, so its PDF is rendered once and kept (the newest RUN_PDFS_KEPT) under the
 * run, its completion and the recordings its filmstrip shows: a purged recording gives a new key.
 */
import { Router } from "express";
import { authOf } from "../../auth/authenticate.js";
import { buildReport } from "../../reports/report.js";
import { buildReportExtras, planReportExtras, reportPdfKey } from "../../reports/report-extras.js";
import { RenderCache } from "../../reports/render-cache.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { ReportQuery } from "../schemas/runs.js";
import { writeJsonWithLongArray } from "../../http/json-list-stream.js";
import { contentSha256 } from "../send-object.js";
import { parseQuery } from "../validate-request.js";
import { requireRun } from "./runs.js";

/** Run report PDFs kept rendered. */
const RUN_PDFS_KEPT = 32;
/** Finished episodes above which a JSON report is written a page at a time (writeJsonWithLongArray). */
const LONG_REPORT_EPISODES = 500;

export function reportRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const pdfs = new RenderCache(RUN_PDFS_KEPT);

  router.get("/runs/:runId/report", async (req, res) => {
    const run = await requireRun(deps.db, authOf(res).accountId, req.params.runId);
    const format = parseQuery(ReportQuery, req).format ?? "json";
    const now = deps.clock();
    const report = await buildReport(deps.db, run, deps.urls.baseUrl, now);
    if (format === "json") {
      // One entry per finished episode in perturbation_schedule.realized: a large run's is written a page at a time
      // (2.3 MB for 10,000 episodes, which stringified in one piece held the event loop); a small one whole, with its ETag.
      if (report.perturbation_schedule.realized.length > LONG_REPORT_EPISODES) await writeJsonWithLongArray(req, res, report, ["perturbation_schedule", "realized"], deps.log);
      else res.json(report);
      return;
    }
    const plan = await planReportExtras(deps.db, run);
    const pdf = await pdfs.get(reportPdfKey(run, plan), async () => deps.pdf.report(report, now, await buildReportExtras(plan, deps.objects)));
    res.type("application/pdf").set("Content-Disposition", `inline; filename="assay-report-${run.id}.pdf"`).set(contentSha256(pdf)).send(pdf);
  });

  return router;
}

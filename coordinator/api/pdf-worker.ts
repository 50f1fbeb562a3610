/**
 * The PDF worker thread (started by coordinator/api/pdf-renderer.ts through pdf-worker-entry.mjs):
 * renders each job it is sent and answers with the bytes or the error, one job at a time.
 */
import { parentPort } from "node:worker_threads";
import { renderShippingLabel } from "../kits/label-pdf.js";
import { renderReportPdf } from "../reports/report-pdf.js";
import type { PdfAnswer, PdfJob } from "./pdf-renderer.js";

const port = parentPort;
if (!port) throw new Error("coordinator/api/pdf-worker.ts runs as a worker thread (coordinator/api/pdf-renderer.ts starts it)");

port.on("message", (job: PdfJob) => void render(job));

/** Renders one job and posts its answer; a failure is the answer's error, never a rejection. */
async function render(job: PdfJob): Promise<void> {
  let answer: PdfAnswer;
  try {
    const now = new Date(job.now);
    const pdf = job.kind === "label" ? await renderShippingLabel(job.kit, now) : await renderReportPdf(job.report, now, {}, job.extras);
    answer = { id: job.id, pdf };
  } catch (error) {
    answer = { id: job.id, error: error instanceof Error ? error.message : String(error) };
  }
  port!.postMessage(answer);
}

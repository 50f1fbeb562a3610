/**
 * Where the API's PDFs are rendered: shipping labels and reports. The coordinator renders them on
 * one worker thread (`workerPdfRenderer`), so PDF layout never runs on the event loop that answers
 * the API, the fleet and every cell link; the worker starts on the first PDF and is started again
 * after a crash. `inProcessPdfRenderer` renders on the caller's loop (in slices of a few ms, see
 * coordinator/pdf/pdf-document.ts), the default of an API built without a coordinator.
 */
import { Worker } from "node:worker_threads";
import { renderShippingLabel } from "../kits/label-pdf.js";
import type { KitRecord } from "../store/kits-repo.js";
import type { PublishedReport } from "../reports/published-report.js";
import type { ReportExtras } from "../reports/report-extras.js";
import { renderReportPdf } from "../reports/report-pdf.js";

/** A report as rendered: the owner's (with cost) or a published one (without). */
export type RenderableReport = PublishedReport & { cost?: { robot_hours: number; environment_hours: number; cost_usd: number } };

export interface PdfRenderer {
  label(kit: KitRecord, now: Date): Promise<Buffer>;
  /** `extras` (a run's title, table, funnel, filmstrip, methods) only for the owner's report of a run. */
  report(report: RenderableReport, now: Date, extras?: ReportExtras): Promise<Buffer>;
  /** Stops the worker, if any; pending renders fail. */
  close(): Promise<void>;
}

/** A job as the worker receives it (coordinator/api/pdf-worker.ts). */
export type PdfJob = { id: number } & PdfWork;
type PdfWork = { now: string } & ({ kind: "label"; kit: KitRecord } | { kind: "report"; report: RenderableReport; extras?: ReportExtras });
/** The worker's answer: the PDF's bytes, or why it failed. */
export type PdfAnswer = { id: number; pdf: Uint8Array } | { id: number; error: string };

/** Renders on the caller's event loop (in slices). */
export function inProcessPdfRenderer(): PdfRenderer {
  return {
    label: (kit, now) => renderShippingLabel(kit, now),
    report: (report, now, extras) => renderReportPdf(report, now, {}, extras),
    close: async () => undefined,
  };
}

/** Renders on a worker thread, started on first use. */
export function workerPdfRenderer(): PdfRenderer {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve: (pdf: Buffer) => void; reject: (error: Error) => void }>();

  const failAll = (error: Error) => {
    for (const job of pending.values()) job.reject(error);
    pending.clear();
  };
  const start = (): Worker => {
    const started = new Worker(new URL("./pdf-worker-entry.mjs", import.meta.url));
    // An idle worker does not keep the process alive; an HTTP request waiting on a render does.
    started.unref();
    started.on("message", (answer: PdfAnswer) => {
      const job = pending.get(answer.id);
      if (!job) return;
      pending.delete(answer.id);
      if ("error" in answer) job.reject(new Error(`PDF render failed: ${answer.error}`));
      else job.resolve(Buffer.from(answer.pdf.buffer, answer.pdf.byteOffset, answer.pdf.byteLength));
    });
    started.on("error", (error) => {
      if (worker === started) worker = undefined;
      failAll(error);
    });
    started.on("exit", (code) => {
      if (worker === started) worker = undefined;
      failAll(new Error(`the PDF worker exited with code ${code}`));
    });
    return started;
  };
  const render = (job: PdfWork): Promise<Buffer> => {
    worker ??= start();
    const id = nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker!.postMessage({ ...job, id } satisfies PdfJob);
    });
  };
  return {
    label: (kit, now) => render({ kind: "label", kit, now: now.toISOString() }),
    report: (report, now, extras) => render({ kind: "report", report, now: now.toISOString(), ...(extras ? { extras } : {}) }),
    async close() {
      const running = worker;
      worker = undefined;
      if (running) await running.terminate();
    },
  };
}

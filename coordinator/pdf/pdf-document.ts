/**
 * A pdfkit document rendered in slices, so a render never holds the event loop for more than a few
 * milliseconds at a time: pdfkit lays text out synchronously, so the renderer calls `pause()`
 * between lines and sections, and `pause()` yields to the loop once the current slice has used
 * `sliceMs`. Each step between pauses is small because its text is bounded (pdf-text.ts), so a
 * whole render costs time linear in its input and other requests run between its slices.
 * Measured with `perf_hooks.monitorEventLoopDelay` in the bench suite `render-pdf`.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import PDFDocument from "pdfkit";

export type Doc = InstanceType<typeof PDFDocument>;

/** Default longest slice of synchronous rendering before the loop gets a turn. */
export const PDF_SLICE_MS = 4;

/** The work a render did, counted rather than timed (tests compare growth with it). */
export interface PdfWork {
  /** Characters pdfkit measured while laying text out: linear in the text when layout is. */
  measuredChars: number;
  /** Times the render gave the loop a turn. */
  slices: number;
}

export interface PdfRender {
  doc: Doc;
  /** Gives the event loop a turn when this slice has run `sliceMs`; call it between lines and sections. */
  pause(): Promise<void>;
  /** Ends the document; resolves with the whole PDF (it begins with "%PDF"). */
  end(): Promise<Buffer>;
}

export interface PdfRenderOptions {
  sliceMs?: number;
  /** Counters to add this render's work to. */
  work?: PdfWork;
}

/** A new document with `documentOptions`, collecting its output. */
export function startPdf(documentOptions: PDFKit.PDFDocumentOptions, options: PdfRenderOptions = {}): PdfRender {
  const sliceMs = options.sliceMs ?? PDF_SLICE_MS;
  const work = options.work;
  const doc = new PDFDocument(documentOptions);
  if (work) {
    const widthOfString = doc.widthOfString.bind(doc);
    doc.widthOfString = (text: string, textOptions?: PDFKit.Mixins.TextOptions) => {
      work.measuredChars += text.length;
      return widthOfString(text, textOptions);
    };
  }
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  let sliceStart = performance.now();
  return {
    doc,
    async pause() {
      if (performance.now() - sliceStart < sliceMs) return;
      await nextTurn();
      if (work) work.slices++;
      sliceStart = performance.now();
    },
    end() {
      doc.end();
      return done;
    },
  };
}

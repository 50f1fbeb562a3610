/**
 * A pdfkit document rendered in slices, so a render never holds the event loop for more than a few
 * milliseconds at a time: pdfkit lays text out synchronously, so the renderer calls `pause()`
 * between lines and sections, and `pause()` yields to the loop once the current slice has used
 * `sliceMs`. Each step between pauses is small because its text is bounded (pdf-text.ts), so a
 * whole render costs time linear in its input and other requests run between its slices.
 * Measured with `perf_hooks.monitorEventLoopDelay` in the bench suite `render-pdf`.
 *
 * A document made with `embedFont` embeds its font (DejaVu Sans from @fontsource/dejavu-sans, subset
 * to the glyphs used). pdfkit's default, the standard Helvetica, is not embedded: pdfkit lays text out
 * with Helvetica's metrics and each viewer draws it with whatever sans it has, so where the viewer's
 * glyphs are narrower than Helvetica's advances a gap opens ("so101@ 3.11", the wide "@" in
 * particular) and text extraction reads a space. With the font embedded, layout, drawing and
 * extraction use the same glyphs and widths in every viewer. The names "Helvetica", "Helvetica-Bold",
 * "Helvetica-Oblique" and "Helvetica-BoldOblique" are then the embedded faces. Laying text out in an
 * embedded font costs several times the CPU of the standard font's metrics (fontkit shapes each
 * word), so documents of unbounded customer text set in a machine-read layout (shipping labels) keep
 * the standard font; reports, which people read and cite, embed it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setImmediate as nextTurn } from "node:timers/promises";
import PDFDocument from "pdfkit";
import { sfntOfWoff } from "./woff-font.js";

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
  /** Embed DejaVu Sans under the Helvetica names (default false: the standard, non-embedded Helvetica). */
  embedFont?: boolean;
  /** Counters to add this render's work to. */
  work?: PdfWork;
}

/** The embedded faces, by the names documents select them with. */
export const PDF_FONTS = { regular: "Helvetica", bold: "Helvetica-Bold", italic: "Helvetica-Oblique", boldItalic: "Helvetica-BoldOblique" } as const;

const FONT_FILES: Record<keyof typeof PDF_FONTS, string> = {
  regular: "dejavu-sans-latin-400-normal.woff",
  bold: "dejavu-sans-latin-700-normal.woff",
  italic: "dejavu-sans-latin-400-italic.woff",
  boldItalic: "dejavu-sans-latin-700-italic.woff",
};

let fontBytes: Record<keyof typeof PDF_FONTS, Buffer> | undefined;

/**
 * The faces as TrueType bytes, read from node_modules and unpacked from WOFF (woff-font.ts) on first
 * use; the files never change while a process runs.
 */
function embeddedFonts(): Record<keyof typeof PDF_FONTS, Buffer> {
  if (!fontBytes) {
    const require = createRequire(import.meta.url);
    const read = (file: string) => sfntOfWoff(readFileSync(require.resolve(`@fontsource/dejavu-sans/files/${file}`)));
    fontBytes = { regular: read(FONT_FILES.regular), bold: read(FONT_FILES.bold), italic: read(FONT_FILES.italic), boldItalic: read(FONT_FILES.boldItalic) };
  }
  return fontBytes;
}

/** A new document with `documentOptions`, collecting its output; with `embedFont`, its text is set in the embedded font. */
export function startPdf(documentOptions: PDFKit.PDFDocumentOptions, options: PdfRenderOptions = {}): PdfRender {
  const sliceMs = options.sliceMs ?? PDF_SLICE_MS;
  const work = options.work;
  const fonts = options.embedFont ? embeddedFonts() : undefined;
  // `font` replaces pdfkit's initial Helvetica, so not even the default face is a standard font.
  const doc = new PDFDocument(fonts ? { ...documentOptions, font: fonts.regular as unknown as string } : documentOptions);
  if (fonts) {
    for (const face of Object.keys(PDF_FONTS) as Array<keyof typeof PDF_FONTS>) doc.registerFont(PDF_FONTS[face], fonts[face]);
    doc.font(PDF_FONTS.regular);
  }
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

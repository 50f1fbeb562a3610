/**
 * The compare headline on the PDF report: a compare's or transfer's difference, its interval and test,
 * the sentence it supports and each side's rate, as result.headline words them
 * (coordinator/runs/compare-headline.ts), so the PDF says what the JSON, the console and the CLI say.
 */
import type { Doc } from "../pdf/pdf-document.js";
import type { CompareHeadline } from "../runs/compare-headline.js";

/**
 * Draws the section at the current y when the report has a compare headline; nothing otherwise.
 * `line` writes one bounded paragraph (report-pdf.ts's, which gives the event loop its turns).
 */
export async function drawCompareHeadline(doc: Doc, headline: CompareHeadline | undefined, line: (text: string) => Promise<void>): Promise<void> {
  if (!headline) return;
  doc.moveDown(0.6).font("Helvetica-Bold").fontSize(11).fillColor("black").text(`Comparison: ${headline.difference.of}`, doc.page.margins.left);
  doc.font("Helvetica-Bold").fontSize(10);
  await line(headline.sentence);
  doc.font("Helvetica").fontSize(9);
  for (const text of headline.lines.slice(1)) await line(text);
}

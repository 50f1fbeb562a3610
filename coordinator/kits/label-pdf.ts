/**
 * The printable shipping label of a kit (A6 portrait, one page): Assay's receiving address, a large
 * kit code, the kit's name, id and account, and its packing list. Made with pdfkit's built-in
 * Helvetica, so no font files are needed. Item descriptions are cut at LABEL_DESC_CHARS for display.
 */
import { startPdf, type PdfRenderOptions } from "../pdf/pdf-document.js";
import { pdfText } from "../pdf/pdf-text.js";
import type { KitItem, KitRecord } from "../store/kits-repo.js";

/** Where customers ship kits. */
export const RETURN_ADDRESS = ["Assay Robot Evaluation", "Receiving: customer kits", "1 Test Cell Way", "Oakland, CA 94607", "USA"];

/** The large code on the label: the kit id's suffix, upper-cased, in groups of four. */
export function kitCode(kitId: string): string {
  const suffix = kitId.replace(/^kit_/, "").toUpperCase();
  return suffix.match(/.{1,4}/g)?.join("-") ?? suffix;
}

/** Longest item description drawn on a label; longer ones end "..." (the kit's JSON has them whole). */
export const LABEL_DESC_CHARS = 200;
/** Most item lines drawn on a label; the rest are counted on one line. */
export const LABEL_ITEMS_MAX = 100;

/**
 * Renders the label; resolves with the whole PDF (it begins with "%PDF"). Every text is bounded
 * (pdf-text.ts) and the loop gets a turn between lines (pdf-document.ts), so a label of the
 * largest legal kit, or of a kit stored before the bounds, renders in linear time off the loop's
 * critical path.
 */
export async function renderShippingLabel(kit: KitRecord, now: Date, options: PdfRenderOptions = {}): Promise<Buffer> {
  const pdf = startPdf({ size: "A6", margin: 24, info: { Title: `Assay kit ${pdfText(kit.name, 64)}`, Author: "Assay", CreationDate: now } }, options);
  const { doc } = pdf;
  await pdf.pause();

  doc.font("Helvetica-Bold").fontSize(9).text("SHIP TO", { characterSpacing: 1 });
  doc.font("Helvetica").fontSize(11);
  for (const line of RETURN_ADDRESS) doc.text(line);
  doc.moveDown(0.8);
  await pdf.pause();

  doc.font("Helvetica-Bold").fontSize(9).text("KIT CODE", { characterSpacing: 1 });
  doc.font("Helvetica-Bold").fontSize(24).text(kitCode(kit.id));
  doc.moveDown(0.4);

  const name = pdfText(kit.name, 64);
  doc.font("Helvetica").fontSize(10);
  doc.text(`Kit: ${name}  (kit/${name})`);
  doc.text(`Id: ${kit.id}`);
  doc.text(`Account: ${kit.account_id}`);
  doc.moveDown(0.6);
  await pdf.pause();

  doc.font("Helvetica-Bold").fontSize(9).text("CONTENTS", { characterSpacing: 1 });
  doc.font("Helvetica").fontSize(10);
  for (const item of kit.items.slice(0, LABEL_ITEMS_MAX)) {
    doc.text(`${item.qty} x ${pdfText(item.desc, LABEL_DESC_CHARS)}`);
    await pdf.pause();
  }
  if (kit.items.length > LABEL_ITEMS_MAX) doc.text(`... and ${kit.items.length - LABEL_ITEMS_MAX} more lines (GET /v1/kits/${kit.id})`);
  doc.moveDown(0.6);
  doc.fontSize(7).fillColor("#555555").text(`Printed ${now.toISOString()}. Put this label on the outside of the box and a copy inside.`);
  return pdf.end();
}

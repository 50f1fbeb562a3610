/**
 * The printable shipping label of a kit (A6 portrait, one page): Assay's receiving address, a large
 * kit code, the kit's name, id and account, and its packing list. Made with pdfkit's built-in
 * Helvetica, so no font files are needed.
 */
import PDFDocument from "pdfkit";
import type { KitItem, KitRecord } from "./kits-repo.js";

/** Where customers ship kits. */
export const RETURN_ADDRESS = ["Assay Robot Evaluation", "Receiving: customer kits", "1 Test Cell Way", "Oakland, CA 94607", "USA"];

/** The large code on the label: the kit id's suffix, upper-cased, in groups of four. */
export function kitCode(kitId: string): string {
  const suffix = kitId.replace(/^kit_/, "").toUpperCase();
  return suffix.match(/.{1,4}/g)?.join("-") ?? suffix;
}

/** Renders the label; resolves with the whole PDF (it begins with "%PDF"). */
export function renderShippingLabel(kit: KitRecord, now: Date): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A6", margin: 24, info: { Title: `Assay kit ${kit.name}`, Author: "Assay", CreationDate: now } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });

  doc.font("Helvetica-Bold").fontSize(9).text("SHIP TO", { characterSpacing: 1 });
  doc.font("Helvetica").fontSize(11);
  for (const line of RETURN_ADDRESS) doc.text(line);
  doc.moveDown(0.8);

  doc.font("Helvetica-Bold").fontSize(9).text("KIT CODE", { characterSpacing: 1 });
  doc.font("Helvetica-Bold").fontSize(24).text(kitCode(kit.id));
  doc.moveDown(0.4);

  doc.font("Helvetica").fontSize(10);
  doc.text(`Kit: ${kit.name}  (kit/${kit.name})`);
  doc.text(`Id: ${kit.id}`);
  doc.text(`Account: ${kit.account_id}`);
  doc.moveDown(0.6);

  doc.font("Helvetica-Bold").fontSize(9).text("CONTENTS", { characterSpacing: 1 });
  doc.font("Helvetica").fontSize(10);
  for (const item of kit.items) doc.text(`${item.qty} x ${item.desc}`);
  doc.moveDown(0.6);
  doc.fontSize(7).fillColor("#555555").text(`Printed ${now.toISOString()}. Put this label on the outside of the box and a copy inside.`);
  doc.end();
  return done;
}

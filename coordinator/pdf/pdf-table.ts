/**
 * A simple ruled table for pdfkit documents: a bold header between two rules, then rows, each cell
 * one line cut with an ellipsis to its column (bounded text, see pdf-text.ts), a rule at the end. A
 * row that would cross the bottom margin starts a new page and repeats the header. Draws at the
 * current y and leaves y below the table.
 */
import { PDF_FONTS, type Doc } from "./pdf-document.js";
import { pdfText } from "./pdf-text.js";

export interface PdfColumn {
  title: string;
  width: number;
  align?: "left" | "right" | "center";
}

const ROW_H = 13;
const CELL_CHARS = 120;

export async function drawTable(doc: Doc, columns: readonly PdfColumn[], rows: ReadonlyArray<readonly string[]>, pause: () => Promise<void> = async () => {}, fontSize = 8.5): Promise<void> {
  const left = doc.page.margins.left;
  const width = columns.reduce((sum, c) => sum + c.width, 0);
  const bottom = () => doc.page.height - doc.page.margins.bottom;
  const rule = (y: number, weight: number) => doc.lineWidth(weight).strokeColor("#000000").moveTo(left, y).lineTo(left + width, y).stroke();
  const line = (cells: readonly string[], y: number, font: string) => {
    let x = left;
    doc.font(font).fontSize(fontSize).fillColor("#000000");
    for (const [i, column] of columns.entries()) {
      doc.text(pdfText(cells[i] ?? "", CELL_CHARS, CELL_CHARS), x + 3, y + 3, { width: column.width - 6, align: column.align ?? "left", lineBreak: false, ellipsis: true, height: ROW_H });
      x += column.width;
    }
  };
  const header = () => {
    const y = doc.y;
    rule(y, 1);
    line(columns.map((c) => c.title), y, PDF_FONTS.bold);
    rule(y + ROW_H + 2, 0.5);
    // pdfkit moved y past each cell's text; rows are placed from the header's top.
    doc.y = y + ROW_H + 3;
  };
  if (doc.y + 2 * ROW_H > bottom()) doc.addPage();
  header();
  for (const cells of rows) {
    if (doc.y + ROW_H > bottom()) {
      rule(doc.y, 1);
      doc.addPage();
      header();
    }
    const y = doc.y;
    line(cells, y, PDF_FONTS.regular);
    doc.y = y + ROW_H;
    await pause();
  }
  const end = doc.y + 2;
  rule(end, 1);
  doc.x = left;
  doc.y = end + 8;
}

/**
 * A paper's figure (issue 28 item 4): each row's success rate as a dot with its 95% interval as a
 * bar with end ticks, on a 0-100% axis with gridlines every 25%, the row's label on the left and its
 * figure ("84.1% (n = 20)") on the right. Hand-written SVG 1.1 (every label is a `<text>` element,
 * so it stays text when a paper includes it, and a reader can select it); the PNG is the same SVG
 * rendered by sharp (librsvg) at 2x, so the two always agree.
 *
 * Size: FIGURE_WIDTH x (top + rows x ROW_HEIGHT + axis) user units; the PNG is twice that in pixels.
 */
import { loadSharp } from "../../protocol/image/load-sharp.js";
import { percent } from "./paper-names.js";
import type { PaperRow } from "./paper-rows.js";

export const FIGURE_WIDTH = 640;
export const ROW_HEIGHT = 28;
/** PNG pixels per SVG unit. */
export const PNG_SCALE = 2;
const TOP = 40;
const AXIS = 36;
const LABEL_W = 190;
const FIGURE_W = 110;
const LABEL_CHARS = 30;
/** DejaVu Sans is what the PNG is rendered with; the others are what a paper's viewer likely has. */
const FONT = "DejaVu Sans, Helvetica, Arial, sans-serif";
const COLOR = "#1f4e9a";

/** `text` safe inside an XML element or attribute. */
export function xmlEscape(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, " ").replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const round = (x: number) => Math.round(x * 10) / 10;

/** The figure's size in SVG units for `rows` rows. */
export function figureSize(rows: number): { width: number; height: number } {
  return { width: FIGURE_WIDTH, height: TOP + Math.max(rows, 1) * ROW_HEIGHT + AXIS };
}

/** The figure as a standalone SVG document; `title` is drawn above the plot and kept as `<title>`. */
export function figureSvg(rows: readonly PaperRow[], title: string): string {
  const { width, height } = figureSize(rows.length);
  const axisX = LABEL_W;
  const axisW = width - LABEL_W - FIGURE_W - 10;
  const xOf = (p: number) => round(axisX + Math.min(1, Math.max(0, p)) * axisW);
  const plotBottom = TOP + Math.max(rows.length, 1) * ROW_HEIGHT;
  const shownTitle = title.length > 90 ? `${title.slice(0, 87)}...` : title;
  const out: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
    `  <title>${xmlEscape(title)}</title>`,
    `  <rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `  <text x="10" y="22" font-size="13" font-weight="bold" fill="#000000">${xmlEscape(shownTitle)}</text>`,
    `  <g class="grid" stroke="#cccccc" stroke-width="0.8">`,
  ];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) out.push(`    <line x1="${xOf(tick)}" y1="${TOP}" x2="${xOf(tick)}" y2="${plotBottom}"/>`);
  out.push("  </g>", `  <g class="axis" font-size="10" fill="#444444" text-anchor="middle">`);
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) out.push(`    <text x="${xOf(tick)}" y="${plotBottom + 14}">${tick * 100}%</text>`);
  out.push(`    <text x="${round(axisX + axisW / 2)}" y="${plotBottom + 30}">Success rate (dot) with 95% interval (bar)</text>`, "  </g>");
  for (const [i, row] of rows.entries()) {
    const y = TOP + i * ROW_HEIGHT + ROW_HEIGHT / 2;
    const label = row.label.length > LABEL_CHARS ? `${row.label.slice(0, LABEL_CHARS - 3)}...` : row.label;
    const [lo, hi] = row.ci95;
    out.push(
      `  <g class="row">`,
      `    <text x="${LABEL_W - 8}" y="${y + 4}" font-size="11" text-anchor="end" fill="#000000">${xmlEscape(label)}</text>`,
      `    <line x1="${xOf(lo)}" y1="${y}" x2="${xOf(hi)}" y2="${y}" stroke="${COLOR}" stroke-width="2"/>`,
      `    <line x1="${xOf(lo)}" y1="${y - 5}" x2="${xOf(lo)}" y2="${y + 5}" stroke="${COLOR}" stroke-width="1.5"/>`,
      `    <line x1="${xOf(hi)}" y1="${y - 5}" x2="${xOf(hi)}" y2="${y + 5}" stroke="${COLOR}" stroke-width="1.5"/>`,
      `    <circle class="rate" cx="${xOf(row.success_rate)}" cy="${y}" r="4" fill="${COLOR}"/>`,
      `    <text x="${width - FIGURE_W + 2}" y="${y + 4}" font-size="10" fill="#000000">${percent(row.success_rate)} (n = ${row.n})</text>`,
      "  </g>",
    );
  }
  out.push("</svg>", "");
  return out.join("\n");
}

/** The SVG rendered as PNG at PNG_SCALE (72 dpi x scale). */
export async function figurePng(svg: string): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(Buffer.from(svg), { density: 72 * PNG_SCALE }).png().toBuffer();
}

/**
 * A PDF as a reader sees it: every page rendered by pdf.js (pdfjs-dist from node_modules, no CDN) in
 * headless Chromium, one PNG screenshot per page and the page's text as pdf.js extracts it (the
 * text a reader selects and copies, spaced by where the glyphs were actually placed: a glyph gap in
 * the PDF shows as a space that is not in the string drawn).
 */
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { AddressInfo } from "node:net";
import type { Page } from "puppeteer-core";

export interface RenderedPdfPage {
  /** The page's text in reading order, items joined by a space where pdf.js saw a gap or line end. */
  text: string;
  /** The page rendered at 1.5x as PNG. */
  png: Buffer;
  widthPx: number;
  heightPx: number;
}

const PAGE = `<!doctype html><meta charset="utf-8"><body style="margin:0;background:#888">
<script type="module">
import * as pdfjs from "/pdfjs/build/pdf.mjs";
pdfjs.GlobalWorkerOptions.workerSrc = "/pdfjs/build/pdf.worker.mjs";
window.renderPdf = async () => {
  const pdf = await pdfjs.getDocument({ url: "/doc.pdf", standardFontDataUrl: "/pdfjs/standard_fonts/" }).promise;
  const pages = [];
  for (let i = 1; i <= pdf.numPages; i++) {
    const page = await pdf.getPage(i);
    const viewport = page.getViewport({ scale: 1.5 });
    const canvas = document.createElement("canvas");
    canvas.width = Math.ceil(viewport.width);
    canvas.height = Math.ceil(viewport.height);
    canvas.id = "page-" + i;
    canvas.style.display = "block";
    document.body.append(canvas);
    await page.render({ canvasContext: canvas.getContext("2d"), canvas, viewport }).promise;
    const content = await page.getTextContent();
    const text = content.items.map((item) => item.str + (item.hasEOL ? "\\n" : "")).join("");
    pages.push({ text, width: canvas.width, height: canvas.height });
  }
  return pages;
};
window.ready = true;
</script>`;

/** Serves pdf.js and `pdf` on loopback while `use` runs. */
async function serving<T>(pdf: Buffer, use: (baseUrl: string) => Promise<T>): Promise<T> {
  const root = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    if (path === "/doc.pdf") return void res.writeHead(200, { "content-type": "application/pdf" }).end(pdf);
    const file = /^\/pdfjs\/((?:build|standard_fonts)\/[\w.-]+)$/.exec(path);
    if (!file) return void res.writeHead(404).end();
    try {
      const type = file[1].endsWith(".mjs") ? "text/javascript" : "application/octet-stream";
      res.writeHead(200, { "content-type": type }).end(readFileSync(join(root, file[1])));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Renders every page of `pdf` with pdf.js in a new tab of `browser`. */
export async function renderPdfPages(browser: { newPage(): Promise<Page> }, pdf: Buffer): Promise<RenderedPdfPage[]> {
  return serving(pdf, async (baseUrl) => {
    const tab = await browser.newPage();
    try {
      const errors: string[] = [];
      tab.on("pageerror", (error) => errors.push((error as Error).message));
      await tab.goto(baseUrl);
      await tab.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
      const pages = await tab.evaluate(() => (window as unknown as { renderPdf: () => Promise<Array<{ text: string; width: number; height: number }>> }).renderPdf());
      if (errors.length) throw new Error(`pdf.js failed: ${errors.join("; ")}`);
      const out: RenderedPdfPage[] = [];
      for (const [i, page] of pages.entries()) {
        const canvas = await tab.$(`#page-${i + 1}`);
        const png = Buffer.from(await canvas!.screenshot({ type: "png" }));
        out.push({ text: page.text, png, widthPx: page.width, heightPx: page.height });
      }
      return out;
    } finally {
      await tab.close();
    }
  });
}

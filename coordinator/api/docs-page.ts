/**
 * GET /docs/errors and /docs/api (no auth): the markdown in docs/ rendered as a minimal HTML page,
 * so an error's `doc_url` (`<docsUrl>/errors#<code>`) lands on that code's section.
 * `?format=md` (or Accept: text/markdown) returns the markdown itself.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Router } from "express";
import { AssayError } from "../errors/assay-error.js";

const PAGES: Record<string, string> = { errors: "errors.md", api: "api.md" };

/** The pages served under /docs, e.g. `errors` at /docs/errors. */
export const DOCS_PAGES: readonly string[] = Object.keys(PAGES);

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<a href="$2">$1</a>');
}

/** Headings (`## name {#anchor}` or the heading text as anchor), tables, lists, fenced code, paragraphs. */
export function renderMarkdown(markdown: string, title: string): string {
  const out: string[] = [];
  const lines = markdown.split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const heading = /^(#{1,4})\s+(.*?)\s*(?:\{#([\w:-]+)\})?$/.exec(line);
    if (line.startsWith("```")) {
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
      i++;
    } else if (heading) {
      const level = heading[1].length;
      const anchor = heading[3] ?? heading[2].toLowerCase().replace(/`/g, "").replace(/[^\w:-]+/g, "-");
      out.push(`<h${level} id="${escapeHtml(anchor)}">${inline(heading[2])}</h${level}>`);
      i++;
    } else if (line.startsWith("|")) {
      const rows: string[][] = [];
      for (; i < lines.length && lines[i].startsWith("|"); i++) {
        if (/^\|[\s|:-]+\|$/.test(lines[i])) continue;
        rows.push(lines[i].slice(1, -1).split("|").map((cell) => cell.trim()));
      }
      const [head, ...body] = rows;
      out.push(`<table><tr>${head.map((c) => `<th>${inline(c)}</th>`).join("")}</tr>${body.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</table>`);
    } else if (/^\s*[-*]\s+/.test(line)) {
      const items: string[] = [];
      for (; i < lines.length && /^\s*[-*]\s+/.test(lines[i]); i++) items.push(`<li>${inline(lines[i].replace(/^\s*[-*]\s+/, ""))}</li>`);
      out.push(`<ul>${items.join("")}</ul>`);
    } else if (line.trim() === "") {
      i++;
    } else {
      const para: string[] = [];
      for (; i < lines.length && lines[i].trim() !== "" && !/^(#|\||```|\s*[-*]\s)/.test(lines[i]); i++) para.push(lines[i]);
      out.push(`<p>${inline(para.join(" "))}</p>`);
    }
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}code{background:#f4f4f4}</style>
</head><body>${out.join("\n")}</body></html>`;
}

export function docsRouter(docsDir: string): Router {
  const router = Router();
  router.get("/:page", (req, res) => {
    // Own keys only: "constructor" or "__proto__" must not reach Object.prototype.
    const file = Object.hasOwn(PAGES, req.params.page) ? PAGES[req.params.page] : undefined;
    if (!file) throw new AssayError("not_found", `no docs page ${JSON.stringify(req.params.page)}; pages: ${Object.keys(PAGES).join(", ")}`);
    const markdown = readFileSync(join(docsDir, file), "utf8");
    const wantsMarkdown = req.query.format === "md" || (req.accepts(["text/html", "text/markdown"]) === "text/markdown");
    if (wantsMarkdown) res.type("text/markdown; charset=utf-8").send(markdown);
    // The page's one <style> is inline; nothing else may load or run.
    else res.type("html").set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'").send(renderMarkdown(markdown, `Assay: ${req.params.page}`));
  });
  return router;
}

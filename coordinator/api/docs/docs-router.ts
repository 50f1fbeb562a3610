/**
 * The docs site, no key needed:
 * - `GET /docs`: the contents, every docs/*.md by its title, and the API reference;
 * - `GET /docs/<name>`: docs/<name>.md rendered (markdown-page.ts), with a table of contents when
 *   long; `?format=md` (or `Accept: text/markdown`) answers the markdown itself. Error envelopes'
 *   doc_url is `/docs/errors#<code>`;
 * - `GET /docs/api-reference`: the OpenAPI document (`/v1/openapi.json`) rendered in the browser by
 *   Swagger UI, served from the swagger-ui-dist npm package (pinned), nothing from elsewhere;
 * - `GET /docs/images/<file>`, `GET /docs/assets/...`: the docs' pictures, the site's stylesheet and
 *   the reference's scripts.
 * The files are listed when the router is built; each page is rendered on its first request and
 * kept, so a page costs one render per process whatever the traffic.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Router, type Response } from "express";
import { AssayError } from "../../errors/assay-error.js";
import { createMarkdownRenderer, renderMarkdownPage, tableOfContents, type DocsSiteMap } from "./markdown-page.js";

/** A docs page may load its stylesheet and pictures from this origin, nothing else, and run nothing. */
export const DOCS_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The API reference page: its own scripts (Swagger UI and the starter), Swagger UI's inline style
 * attributes and data: icons, and the document fetched from this origin.
 */
export const API_REFERENCE_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), "public");
const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const SWAGGER_VERSION = (JSON.parse(readFileSync(join(SWAGGER_DIR, "package.json"), "utf8")) as { version: string }).version;
/** Swagger UI's files, under a versioned path so they can be cached for good. */
const SWAGGER_ASSETS = `/docs/assets/swagger-ui-${SWAGGER_VERSION}`;
const SWAGGER_FILES: Readonly<Record<string, string>> = { "swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css" };
const OWN_FILES: Readonly<Record<string, string>> = { "docs.css": "text/css", "api-reference.js": "text/javascript" };

export interface DocsSite {
  router: Router;
  /** The site's page paths (`/docs`, `/docs/api`, ...), for metrics labels. */
  paths: readonly string[];
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function layout(title: string, main: string, aside = ""): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body><header class="top"><a class="brand" href="/docs">Assay docs</a><nav aria-label="Site"><a href="/docs">Contents</a> <a href="/docs/api-reference">API reference</a> <a href="/">Console</a></nav></header>
<div class="${aside ? "layout with-toc" : "layout"}">${aside}<main>${main}</main></div></body></html>`;
}

function apiReferencePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Assay API reference</title>
<link rel="stylesheet" href="/docs/assets/docs.css"><link rel="stylesheet" href="${SWAGGER_ASSETS}/swagger-ui.css">
<script src="${SWAGGER_ASSETS}/swagger-ui-bundle.js" defer></script><script src="/docs/assets/api-reference.js" defer></script></head>
<body><header class="top"><a class="brand" href="/docs">Assay docs</a><nav aria-label="Site"><a href="/docs">Contents</a> <a href="/docs/api-reference">API reference</a> <a href="/">Console</a></nav></header>
<main class="reference"><p class="muted">Generated from <a href="/v1/openapi.json">/v1/openapi.json</a>; every /v1 call needs <code>Authorization: Bearer &lt;API key&gt;</code> unless marked public (<a href="/docs/api">the API guide</a>, <a href="/docs/errors">errors</a>).</p>
<div id="swagger-ui"><noscript>The API reference needs JavaScript; <a href="/v1/openapi.json">the OpenAPI document</a> is readable without it.</noscript></div></main></body></html>`;
}

function listFiles(dir: string, pattern: RegExp): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile() && pattern.test(e.name)).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

/** Builds the site over `docsDir` (the repository's docs/). */
export function docsSite(docsDir: string): DocsSite {
  const names = listFiles(docsDir, /^[a-z0-9-]+\.md$/).map((file) => file.slice(0, -".md".length));
  const site: DocsSiteMap = { pages: new Set(names), images: new Set(listFiles(join(docsDir, "images"), /^[\w-]+\.(png|jpg|svg)$/)) };
  const md = createMarkdownRenderer(site);
  const rendered = new Map<string, { title: string; html: string }>();
  let contents: string | undefined;
  let reference: string | undefined;

  const markdownOf = (name: string) => readFileSync(join(docsDir, `${name}.md`), "utf8");
  const page = (name: string) => {
    let done = rendered.get(name);
    if (!done) {
      const result = renderMarkdownPage(md, name, markdownOf(name));
      done = { title: result.title, html: layout(`${result.title} · Assay docs`, result.body, tableOfContents(result.headings)) };
      rendered.set(name, done);
    }
    return done;
  };
  const sendHtml = (res: Response, html: string, csp = DOCS_CSP) => res.type("html").set("Content-Security-Policy", csp).set("Cache-Control", "no-cache").send(html);

  const router = Router();
  router.get("/", (_req, res) => {
    contents ??= layout("Assay docs", `<h1>Assay documentation</h1>
<p>The service's guides, one page per topic, and the API reference generated from the coordinator's schemas.</p>
<ul class="contents">
<li><a href="/docs/api-reference">API reference</a> <span class="muted">(every /v1 operation, its parameters, bodies, answers and error codes)</span></li>
${names.map((name) => `<li><a href="/docs/${name}">${escapeHtml(page(name).title)}</a> <span class="muted">${name}.md</span></li>`).join("\n")}
</ul>`);
    sendHtml(res, contents);
  });
  router.get("/api-reference", (_req, res) => {
    reference ??= apiReferencePage();
    sendHtml(res, reference, API_REFERENCE_CSP);
  });
  router.get("/images/:file", (req, res) => {
    if (!site.images.has(req.params.file)) throw new AssayError("not_found", `no docs image ${JSON.stringify(req.params.file.slice(0, 80))}`);
    res.set("Cache-Control", "no-cache").sendFile(join(docsDir, "images", req.params.file));
  });
  router.get("/assets/:file", (req, res) => {
    const type = Object.hasOwn(OWN_FILES, req.params.file) ? OWN_FILES[req.params.file] : undefined;
    if (!type) throw new AssayError("not_found", `no docs asset ${JSON.stringify(req.params.file.slice(0, 80))}`);
    res.type(type).set("Cache-Control", "no-cache").sendFile(join(PUBLIC_DIR, req.params.file));
  });
  router.get(`/assets/swagger-ui-${SWAGGER_VERSION}/:file`, (req, res) => {
    const type = Object.hasOwn(SWAGGER_FILES, req.params.file) ? SWAGGER_FILES[req.params.file] : undefined;
    if (!type) throw new AssayError("not_found", `no docs asset ${JSON.stringify(req.params.file.slice(0, 80))}`);
    res.type(type).set("Cache-Control", "public, max-age=31536000, immutable").sendFile(join(SWAGGER_DIR, req.params.file));
  });
  router.get("/:page", (req, res) => {
    const name = req.params.page.replace(/\.md$/, "");
    if (!site.pages.has(name)) throw new AssayError("not_found", `no docs page ${JSON.stringify(req.params.page.slice(0, 80))}; GET /docs lists them`);
    const wantsMarkdown = req.query.format === "md" || req.accepts(["text/html", "text/markdown"]) === "text/markdown";
    if (wantsMarkdown) res.type("text/markdown; charset=utf-8").set("Cache-Control", "no-cache").send(markdownOf(name));
    else sendHtml(res, page(name).html);
  });
  return { router, paths: ["/docs", "/docs/api-reference", ...names.map((name) => `/docs/${name}`)] };
}

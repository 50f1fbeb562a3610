/**
 * The web console (coordinator/console/public/): plain HTML, CSS and ES modules, no build step,
 * served at `/`. It is a client of the public /v1 API like any other; this router only serves files.
 *
 * - `GET /` and the console's own paths (`/runs/run_...`, `/keys`, ...: deep links) answer index.html,
 *   `Cache-Control: no-cache`, with a Content-Security-Policy that admits only the console's own scripts.
 * - Assets are under `/assets/<version>/...`, where `<version>` is a hash of every file in public/
 *   taken when the router is built: the current version is cached for a year (`immutable`), so a page
 *   load costs one request for index.html and none for unchanged assets, and a new deployment gets new
 *   URLs. Another version's URL is served the current file, revalidated on every use.
 * - Pinned npm packages the console loads (uPlot) are under `/assets/<version>/vendor/<name>/`, from
 *   node_modules, cached like the assets; their versions are part of `<version>`.
 * - Everything else falls through (`next()`), so /v1, /artifacts, /docs, /streams, /labels and /metrics
 *   keep their routers and unknown paths keep the app's JSON 404.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import express, { Router, type RequestHandler } from "express";

/** The console's first path segments; `GET /<segment>[/...]` serves index.html (app.js turns the path into its hash route). */
export const CONSOLE_PATHS = ["sign-in", "runs", "compare", "tasks", "kits", "keys", "usage", "fleet", "station", "leaderboards"] as const;

/** What the console's page may load: its own scripts and styles; blob: for fetched videos, downloads and images. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * npm packages the console loads, served under `/assets/<version>/vendor/<name>/<file>` from the pinned
 * package's own files (nothing from a CDN); their versions are part of the asset version, so an upgrade
 * gets new URLs. uPlot draws the episode plots (pages/episode-plots.js).
 */
const VENDOR: Record<string, { dir: string; files: readonly string[] }> = {
  uplot: { dir: join(dirname(createRequire(import.meta.url).resolve("uplot/package.json")), "dist"), files: ["uPlot.esm.js", "uPlot.min.css"] },
};

/** index.html's placeholders: the asset path (`/assets/<version>`), and where the module preloads go. */
const ASSETS_PLACEHOLDER = /\{\{assets\}\}/g;
const PRELOAD_PLACEHOLDER = "{{modulepreload}}";

export interface ConsoleRouterOptions {
  /** Directory of the static assets; default coordinator/console/public beside this file. */
  publicDir?: string;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}

/** A short hash of every file's path and bytes: changes whenever any asset changes. */
export function assetVersion(publicDir: string): string {
  const hash = createHash("sha256");
  for (const file of listFiles(publicDir).sort()) {
    hash.update(relative(publicDir, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex").slice(0, 12);
}

/** The console's router; mount it at `/` after the API's routers and before the final 404 handler. */
export function consoleRouter(options: ConsoleRouterOptions = {}): Router {
  const publicDir = options.publicDir ?? join(dirname(fileURLToPath(import.meta.url)), "public");
  const vendorVersions = Object.keys(VENDOR).map((name) => `${name}@${(JSON.parse(readFileSync(join(VENDOR[name]!.dir, "..", "package.json"), "utf8")) as { version: string }).version}`);
  const version = createHash("sha256").update(assetVersion(publicDir)).update(vendorVersions.join(",")).digest("hex").slice(0, 12);
  // Every module is preloaded, so the browser fetches them in parallel instead of import by import.
  const modules = listFiles(publicDir).filter((f) => f.endsWith(".js")).map((f) => relative(publicDir, f).split(sep).join("/")).sort();
  const indexHtml = readFileSync(join(publicDir, "index.html"), "utf8")
    .replace(PRELOAD_PLACEHOLDER, modules.map((m) => `<link rel="modulepreload" href="{{assets}}/${m}">`).join("\n"))
    .replace(ASSETS_PLACEHOLDER, `/assets/${version}`);
  const router = Router();

  const sendIndex: RequestHandler = (_req, res) => {
    res.set({
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-cache",
      "Content-Security-Policy": CONSOLE_CSP,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    }).send(indexHtml);
  };
  router.get("/", sendIndex);
  router.get(new RegExp(`^/(?:${CONSOLE_PATHS.join("|")})(?:/[\\w.@-]*)*$`), sendIndex);

  const headers = (res: express.Response) => res.set("X-Content-Type-Options", "nosniff");
  const current = express.static(publicDir, { index: false, maxAge: "365d", immutable: true, setHeaders: headers });
  const other = express.static(publicDir, { index: false, maxAge: 0, setHeaders: headers });
  router.get("/assets/:version/vendor/:name/:file", (req, res, next) => {
    const vendor = VENDOR[req.params.name];
    if (!vendor || !vendor.files.includes(req.params.file)) return next();
    res.set({
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": req.params.version === version ? "public, max-age=31536000, immutable" : "no-cache",
    }).type(req.params.file.endsWith(".css") ? "text/css" : "text/javascript").sendFile(join(vendor.dir, req.params.file));
  });
  router.use("/assets/:version", (req, res, next) => {
    // index.html is a template; it is only ever served by sendIndex.
    if (req.path === "/index.html") return next();
    return (req.params.version === version ? current : other)(req, res, next);
  });
  return router;
}

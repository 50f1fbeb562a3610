/**
 * The docs site served by a real coordinator, read without a key (issue 28 item 6): the contents
 * page lists every docs/*.md, a crawl from /docs finds no internal link that does not answer 200 and
 * no `#anchor` missing on the page it names, every error code has its anchor on /docs/errors (the
 * envelopes' doc_url), and /v1/openapi.json answers without a key.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { ERROR_CODES } from "../../coordinator/errors/codes.js";
import { startTestService, type TestService } from "./helpers.js";

const DOCS_DIR = new URL("../../docs/", import.meta.url);
const noKey = { authorization: "" };

/** Every href and src in a page, in order. */
function references(html: string): string[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, "&"));
}

describe("docs site (no key)", function () {
  this.timeout(60_000);
  let service: TestService;
  let base: string;
  before(async () => {
    service = await startTestService();
    base = service.coordinator.baseUrl;
  });
  after(async () => {
    await service?.stop();
  });

  it("lists every docs/*.md by its title on /docs, and the API reference", async () => {
    const res = await service.api("/docs", { headers: noKey });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    const html = await res.text();
    const files = readdirSync(DOCS_DIR).filter((f) => f.endsWith(".md"));
    assert.ok(files.length >= 20);
    for (const file of files) {
      const title = /^#\s+(.+)$/m.exec(readFileSync(new URL(file, DOCS_DIR), "utf8"))![1].replace(/`/g, "");
      const name = file.slice(0, -3);
      assert.ok(html.includes(`<a href="/docs/${name}">${title.replace(/&/g, "&amp;")}</a>`), `contents lists ${file} as ${JSON.stringify(title)}`);
    }
    assert.ok(html.includes(`href="/docs/api-reference"`));
  });

  it("answers 200 for every internal link of every served page, and every #anchor exists where it points", async () => {
    const seen = new Map<string, string>(); // path -> body, for pages
    const queue = ["/docs"];
    const anchors: Array<{ from: string; path: string; id: string }> = [];
    const failures: string[] = [];
    while (queue.length > 0) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      const res = await service.api(path, { headers: noKey });
      const type = res.headers.get("content-type") ?? "";
      const body = type.startsWith("text/html") ? await res.text() : (await res.arrayBuffer(), "");
      seen.set(path, body);
      if (res.status !== 200) failures.push(`${path}: ${res.status}`);
      // Only the docs site's own pages are crawled further; the console and the API answer but are not docs.
      if (!path.startsWith("/docs") || !body) continue;
      for (const ref of references(body)) {
        if (/^[a-z]+:/i.test(ref) || ref.startsWith("//")) continue;
        const url = new URL(ref, `${base}${path}`);
        if (url.origin !== new URL(base).origin) continue;
        if (url.hash) anchors.push({ from: path, path: url.pathname, id: decodeURIComponent(url.hash.slice(1)) });
        if (!seen.has(url.pathname) && !queue.includes(url.pathname)) queue.push(url.pathname);
      }
    }
    const pages = [...seen.keys()].filter((p) => /^\/docs\/[a-z0-9-]+$/.test(p));
    assert.ok(pages.length >= 21, `crawled ${pages.length} pages: ${pages.join(" ")}`);
    for (const file of readdirSync(DOCS_DIR).filter((f) => f.endsWith(".md"))) assert.ok(seen.has(`/docs/${file.slice(0, -3)}`), `the crawl reached ${file}`);
    for (const { from, path, id } of anchors) {
      const body = seen.get(path) ?? "";
      if (!body.includes(`id="${id}"`)) failures.push(`${from} links to ${path}#${id}, which has no such anchor`);
    }
    assert.deepEqual(failures, []);
  });

  it("keeps /docs/errors#<code> for every error code (the envelopes' doc_url), and the markdown with ?format=md", async () => {
    const html = await (await service.api("/docs/errors", { headers: noKey })).text();
    for (const code of [...Object.keys(ERROR_CODES), "internal_error"]) assert.ok(html.includes(`id="${code}"`), code);
    const md = await service.api("/docs/errors?format=md", { headers: noKey });
    assert.match(md.headers.get("content-type") ?? "", /text\/markdown/);
    assert.match(await md.text(), /^# Errors/);
  });

  it("gives long pages a table of contents and renders nested list items as lists", async () => {
    const html = await (await service.api("/docs/api", { headers: noKey })).text();
    assert.match(html, /<nav class="toc" aria-label="On this page">/);
    assert.match(html, /<a href="#authentication">Authentication<\/a>/);
    assert.match(html, /<table>/);
    assert.doesNotMatch(html, /<li>\s*[-*] /, "no list marker left as text");
  });

  it("lets a docs page load only its own stylesheet and pictures, and the reference only its own scripts", async () => {
    const page = await service.api("/docs/security", { headers: noKey });
    assert.equal(page.headers.get("content-security-policy"), "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    await page.body?.cancel();
    const reference = await service.api("/docs/api-reference", { headers: noKey });
    const csp = reference.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-eval|https?:/);
    const html = await reference.text();
    for (const ref of references(html)) assert.ok(ref.startsWith("/"), `the reference loads ${ref} from this origin`);
    for (const path of ["/docs/%ZZ", "/docs/constructor", "/docs/assets/..%2fdocs-router.ts", "/docs/images/..%2f..%2fpackage.json", "/docs/assets/swagger-ui-5.35.0/index.html"]) {
      const res = await service.api(path, { headers: noKey });
      assert.equal(res.status, 404, path);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, "not_found", path);
    }
  });

  it("serves /v1/openapi.json without a key, and still refuses a key that is not valid", async () => {
    const res = await service.api("/v1/openapi.json", { headers: noKey });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { security: unknown[] }>> };
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(doc.paths["/v1/openapi.json"].get.security, []);
    const bad = await service.api("/v1/openapi.json", { headers: { authorization: "Bearer nope" } });
    assert.equal(bad.status, 401);
    assert.equal(((await bad.json()) as { error: { code: string } }).error.code, "invalid_api_key");
  });
});

/**
 * The docs renderer (coordinator/api/docs/markdown-page.ts): raw HTML in a doc stays text, links
 * between docs point at the served pages, headings get GitHub's anchors, long pages a table of contents.
 */
import assert from "node:assert/strict";
import { createMarkdownRenderer, headingSlug, renderMarkdownPage, resolveDocLink, tableOfContents } from "../../coordinator/api/docs/markdown-page.js";

const site = { pages: new Set(["api", "errors", "operators"]), images: new Set(["station-reset.png"]) };
const render = (markdown: string) => renderMarkdownPage(createMarkdownRenderer(site), "test", markdown);

describe("docs markdown rendering", () => {
  it("shows raw HTML written in a doc as text and drops javascript: links", () => {
    const { body } = render(`# T\n\n<script>alert(1)</script>\n\nA <img src=x onerror=alert(1)> and [click](javascript:alert(1)).`);
    assert.ok(!body.includes("<script>"), body);
    assert.ok(body.includes("&lt;script&gt;alert(1)&lt;/script&gt;"), body);
    assert.ok(!body.includes("<img"), body);
    assert.ok(!/href="javascript:/i.test(body), body);
  });

  it("rewrites links between docs and to their pictures, and turns repository files into text", () => {
    assert.deepEqual(resolveDocLink("api.md#bounds", site), { kind: "page", href: "/docs/api#bounds" });
    assert.deepEqual(resolveDocLink("errors", site), { kind: "page", href: "/docs/errors" });
    assert.deepEqual(resolveDocLink("docs/operators.md", site), { kind: "page", href: "/docs/operators" });
    assert.deepEqual(resolveDocLink("../docs/api.md", site), { kind: "page", href: "/docs/api" });
    assert.deepEqual(resolveDocLink("images/station-reset.png", site), { kind: "image", href: "/docs/images/station-reset.png" });
    assert.deepEqual(resolveDocLink("../deploy/compose.yaml", site), { kind: "repo-file", path: "deploy/compose.yaml" });
    assert.deepEqual(resolveDocLink("#local", site), { kind: "keep" });
    assert.deepEqual(resolveDocLink("https://example.org/a.md", site), { kind: "keep" });
    const { body } = render(`# T\n\nSee [the API](api.md#bounds), [compose](../deploy/compose.yaml) and ![shot](images/station-reset.png).`);
    assert.ok(body.includes(`<a href="/docs/api#bounds">the API</a>`), body);
    assert.ok(body.includes(`<span class="repo-file" title="deploy/compose.yaml in the Assay repository">compose</span>`), body);
    assert.ok(body.includes(`<img src="/docs/images/station-reset.png" alt="shot">`), body);
  });

  it("gives headings GitHub's anchors, numbering repeats, and keeps error codes as they are", () => {
    const seen = new Map<string, number>();
    assert.equal(headingSlug("Models (POST /v1/models)", seen), "models-post-v1models");
    assert.equal(headingSlug("invalid_api_key", seen), "invalid_api_key");
    assert.equal(headingSlug("Bounds", seen), "bounds");
    assert.equal(headingSlug("Bounds", seen), "bounds-1");
    const { body, title, headings } = render("# The `assay` tool\n\n## `GET /v1/runs` lists\n\n### not_found\n");
    assert.equal(title, "The assay tool");
    assert.ok(body.includes(`<h2 id="get-v1runs-lists">`), body);
    assert.deepEqual(headings.map((h) => [h.level, h.id]), [[2, "get-v1runs-lists"], [3, "not_found"]]);
  });

  it("renders nested lists as lists, and a table of contents only for long pages", () => {
    const { body } = render("# T\n\n- one\n  - inner\n- two\n");
    assert.match(body, /<ul>\s*<li>one\s*<ul>\s*<li>inner<\/li>/);
    assert.equal(tableOfContents(render("# T\n\n## a\n\n## b\n").headings), "");
    const toc = tableOfContents(render("# T\n\n## a\n\n### a1\n\n## b\n\n## c\n\n## d\n").headings);
    assert.match(toc, /^<nav class="toc"/);
    assert.ok(toc.includes(`<li><a href="#a">a</a><ul><li><a href="#a1">a1</a></li></ul></li>`), toc);
  });
});

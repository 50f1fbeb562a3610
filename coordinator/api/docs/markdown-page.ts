/**
 * One docs/*.md file as an HTML page, rendered by markdown-it: raw HTML in the markdown is shown
 * as text (html: false), never passed through; headings get GitHub-style anchors (so
 * `/docs/errors#not_found`, the error envelopes' doc_url, and the `#section` links written in the
 * docs land where they say); links between docs are rewritten to the served pages (`api.md#x` ->
 * `/docs/api#x`, `images/a.png` -> `/docs/images/a.png`); links to repository files outside docs/
 * become plain text naming the file, since nothing serves them. A long page gets a table of contents.
 */
import { posix } from "node:path";
import markdownIt, { type MarkdownIt, type Token } from "markdown-it";

/** What the renderer needs to know about the site a page sits in. */
export interface DocsSiteMap {
  /** Page names served at /docs/<name> (docs/<name>.md). */
  pages: ReadonlySet<string>;
  /** File names served at /docs/images/<file>. */
  images: ReadonlySet<string>;
}

export interface Heading {
  level: number;
  id: string;
  /** The heading's inline HTML (escaped by markdown-it). */
  html: string;
}

export interface RenderedPage {
  /** The page's first level-1 heading as plain text, or its name. */
  title: string;
  /** The article's HTML. */
  body: string;
  /** Level-2 and level-3 headings in order, for the table of contents. */
  headings: Heading[];
}

/** Pages with at least this many level-2 headings get a table of contents. */
const TOC_MIN_SECTIONS = 4;

/**
 * GitHub's heading slug: lower case, punctuation dropped (letters, digits, `_`, `-` and spaces kept),
 * spaces to `-`. Repeats get `-1`, `-2`, ... through `seen`.
 */
export function headingSlug(text: string, seen: Map<string, number>): string {
  const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
  const count = seen.get(base) ?? 0;
  seen.set(base, count + 1);
  return count === 0 ? base : `${base}-${count}`;
}

function plainText(inline: Token): string {
  return (inline.children ?? []).filter((t) => t.type === "text" || t.type === "code_inline").map((t) => t.content).join("");
}

type Target = { kind: "page" | "image"; href: string } | { kind: "repo-file"; path: string } | { kind: "keep" };

/** Where a relative link written in docs/<page>.md points on the site. */
export function resolveDocLink(href: string, site: DocsSiteMap): Target {
  if (href === "" || href.startsWith("#") || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//") || href.startsWith("/")) return { kind: "keep" };
  const hashAt = href.indexOf("#");
  const path = hashAt < 0 ? href : href.slice(0, hashAt);
  const fragment = hashAt < 0 ? "" : href.slice(hashAt);
  let resolved = posix.normalize(posix.join("docs", decodeURI(path)));
  // Some docs name their siblings from the repository's root ("docs/api.md"): same page.
  if (resolved.startsWith("docs/docs/")) resolved = resolved.slice("docs/".length);
  const page = /^docs\/([a-z0-9-]+)(?:\.md)?$/.exec(resolved);
  if (page && site.pages.has(page[1])) return { kind: "page", href: `/docs/${page[1]}${fragment}` };
  const image = /^docs\/images\/([\w.-]+)$/.exec(resolved);
  if (image && site.images.has(image[1])) return { kind: "image", href: `/docs/images/${image[1]}` };
  return { kind: "repo-file", path: resolved };
}

/** A markdown-it instance for one site: anchors on headings, links rewritten for the site. */
export function createMarkdownRenderer(site: DocsSiteMap): MarkdownIt {
  const md = markdownIt({ html: false, linkify: false, typographer: false });
  md.core.ruler.push("assay_docs", (state) => {
    const seen = new Map<string, number>();
    const headings: Heading[] = [];
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i];
      if (token.type === "heading_open") {
        const inline = tokens[i + 1];
        const id = headingSlug(plainText(inline), seen);
        token.attrSet("id", id);
        const level = Number(token.tag.slice(1));
        if (level === 2 || level === 3) headings.push({ level, id, html: md.renderer.renderInline(inline.children ?? [], md.options, state.env) });
      }
      for (const child of token.children ?? []) {
        if (child.type === "link_open") {
          const target = resolveDocLink(String(child.attrGet("href") ?? ""), site);
          if (target.kind === "page" || target.kind === "image") child.attrSet("href", target.href);
          else if (target.kind === "repo-file") child.meta = { repoFile: target.path };
        } else if (child.type === "image") {
          const target = resolveDocLink(String(child.attrGet("src") ?? ""), site);
          if (target.kind === "image") child.attrSet("src", target.href);
        }
      }
    }
    // Closing tags of links turned into text are found by nesting: mark them too.
    for (const token of tokens) {
      const stack: Token[] = [];
      for (const child of token.children ?? []) {
        if (child.type === "link_open") stack.push(child);
        else if (child.type === "link_close") {
          const open = stack.pop();
          if (open?.meta?.repoFile) child.meta = { repoFile: open.meta.repoFile };
        }
      }
    }
    (state.env as { headings?: Heading[] }).headings = headings;
  });
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  const defaultLinkClose = md.renderer.rules.link_close ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const repoFile = tokens[idx].meta?.repoFile as string | undefined;
    if (repoFile) return `<span class="repo-file" title="${md.utils.escapeHtml(repoFile)} in the Assay repository">`;
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
  md.renderer.rules.link_close = (tokens, idx, options, env, self) => {
    const repoFile = tokens[idx].meta?.repoFile as string | undefined;
    if (repoFile) return "</span>";
    return defaultLinkClose(tokens, idx, options, env, self);
  };
  return md;
}

/** Renders one page's markdown; `name` is its file name without `.md`. */
export function renderMarkdownPage(md: MarkdownIt, name: string, markdown: string): RenderedPage {
  const env: { headings?: Heading[] } = {};
  const body = md.render(markdown, env);
  const first = /^#\s+(.+)$/m.exec(markdown);
  const title = first ? plainText({ children: md.parseInline(first[1], {})[0]?.children ?? [] } as Token) : name;
  return { title, body, headings: env.headings ?? [] };
}

/** The table of contents of a long page (HTML: level-2 sections, their level-3 ones nested), or "" for a short one. */
export function tableOfContents(headings: readonly Heading[]): string {
  if (headings.filter((h) => h.level === 2).length < TOC_MIN_SECTIONS) return "";
  const groups: Array<{ section?: Heading; subsections: Heading[] }> = [];
  for (const h of headings) {
    if (h.level === 2) groups.push({ section: h, subsections: [] });
    else if (groups.length === 0) groups.push({ subsections: [h] });
    else groups[groups.length - 1].subsections.push(h);
  }
  const link = (h: Heading) => `<a href="#${h.id}">${h.html}</a>`;
  const items = groups.map((g) => `<li>${g.section ? link(g.section) : ""}${g.subsections.length ? `<ul>${g.subsections.map((h) => `<li>${link(h)}</li>`).join("")}</ul>` : ""}</li>`);
  return `<nav class="toc" aria-label="On this page"><h2>On this page</h2><ul>${items.join("")}</ul></nav>`;
}

/**
 * The folder graph of coordinator/: folder A -> folder B when a file in A imports a file in B. A folder is
 * a direct child of coordinator/ (its subfolders belong to it: api/routes is api); a file directly in
 * coordinator/ (server.ts, options.ts, metrics.ts) is a node of its own. Used by the layer guard
 * (test/unit/coordinator-layers.spec.ts); `npx tsx test/support/folder-graph.ts` prints the graph's
 * loops and each folder's edges.
 *
 * Edges are read from the source text: `import ... from "x"`, `import "x"`, `export ... from "x"`,
 * `import type`, dynamic `import("x")` and type-level `import("x").T`. Type-only imports count: they
 * are erased at run time, but a folder that needs a type from a folder above it is tied to it all the
 * same (the type lives too high). Comments are skipped; the browser files under console/public/ are
 * served as static files and import nothing of the coordinator's.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { productionSources, REPO_ROOT, withoutComments } from "./source-scan.js";
import { cyclicComponents } from "./cyclic-components.js";

/** One import of a file in one folder from a file in another: where it is written, and what it names. */
export interface FolderEdge {
  from: string;
  to: string;
  /** "coordinator/store/runs-repo.ts:12" */
  at: string;
  target: string;
}

/** A static import or re-export at the start of a statement; the clause before `from` has no strings or parentheses. */
const STATIC = /(?:^|[;\n])\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']/g;
/** `import("x")`: a dynamic import, or a type written as `import("x").T`. */
const DYNAMIC = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** The node a coordinator file belongs to: its top folder under coordinator/, or the file itself if it sits there. */
export function nodeOf(file: string): string {
  const parts = file.split("/");
  return parts[1];
}

function resolveRelative(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(REPO_ROOT, dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts"), base];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`${fromFile} imports "${specifier}", which resolves to no file`);
  return relative(REPO_ROOT, found).split("\\").join("/");
}

function lineAt(source: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

/** Every import of coordinator/ that crosses from one node to another, in file order. */
export function coordinatorFolderEdges(): FolderEdge[] {
  const edges: FolderEdge[] = [];
  const files = productionSources("coordinator").filter((f) => !f.startsWith("coordinator/console/public/"));
  for (const file of files) {
    const source = withoutComments(readFileSync(join(REPO_ROOT, file), "utf8"));
    for (const pattern of [STATIC, DYNAMIC]) {
      for (const match of source.matchAll(pattern)) {
        const target = resolveRelative(file, match[1]);
        if (!target || !target.startsWith("coordinator/")) continue;
        const from = nodeOf(file);
        const to = nodeOf(target);
        if (from !== to) edges.push({ from, to, at: `${file}:${lineAt(source, match.index! + match[0].indexOf(match[1]))}`, target });
      }
    }
  }
  return edges;
}

/** Node -> the nodes it imports, from the edges (every node appears as a key). */
export function folderGraph(edges: readonly FolderEdge[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of productionSources("coordinator")) if (!file.startsWith("coordinator/console/public/")) graph.set(nodeOf(file), new Set());
  for (const e of edges) graph.get(e.from)!.add(e.to);
  return graph;
}

/** The folder loops: strongly connected components of more than one folder, each sorted. */
export function loops(graph: Map<string, Set<string>>): string[][] {
  return cyclicComponents(graph);
}

/** The shortest cycle through `start` inside `members` (breadth-first), as nodes from start back to start. */
export function shortestCycle(start: string, members: ReadonlySet<string>, graph: Map<string, Set<string>>): string[] | undefined {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...graph.get(v)!].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(parent.get(path[0])!);
        return [...path, start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return undefined;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const edges = coordinatorFolderEdges();
  const graph = folderGraph(edges);
  const found = loops(graph);
  console.log(`${graph.size} nodes, ${found.length} loop(s)`);
  for (const component of found) {
    console.log(`\nloop of ${component.length}: ${component.join(", ")}`);
    const members = new Set(component);
    for (const from of component) {
      for (const to of [...graph.get(from)!].filter((t) => members.has(t)).sort()) {
        const mine = edges.filter((e) => e.from === from && e.to === to);
        console.log(`  ${from} -> ${to} (${mine.length}): ${mine.slice(0, 4).map((e) => `${e.at} ${e.target}`).join("; ")}`);
      }
    }
  }
}

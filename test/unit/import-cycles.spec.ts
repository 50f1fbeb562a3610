/**
 * The module graph of our production folders has no import cycles, and its dependencies point the
 * way docs/architecture.md draws them (coordinator/ and cell-agent/ never import each other,
 * production code never imports simulators/, protocol/ and firmware-pins/ import nothing of ours).
 *
 * Edges are the static imports of each .ts file: `import ... from "x"`, `import "x"`,
 * `export ... from "x"`. `import type` counts: a type-only cycle is erased at run time, but it still
 * ties the files together (neither can move or be read without the other), which is the coupling
 * this check exists to keep out. Dynamic `import()` is not followed.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cyclicComponents } from "../support/cyclic-components.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** Folders whose module graph is checked; protocol/gen/ is generated and imports nothing of ours. */
const FOLDERS = ["coordinator", "cell-agent", "protocol", "simulators", "firmware-pins"];
const EXCLUDED = ["protocol/gen/"];

/** A static import at the start of a line; the clause between keyword and `from` has no `;`, strings or parentheses. */
const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']/gm;

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listTs(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** A relative specifier (`./x.js`) to the repository-relative .ts file it names; undefined for packages and files outside FOLDERS. */
function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(ROOT, dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts"), base];
  // A plain JavaScript module of ours (scripts/compiled-entry.mjs) is a file too, outside the checked folders.
  const found = candidates.find((c) => c.endsWith(".ts") && existsSync(c)) ?? (/\.m?js$/.test(base) && existsSync(base) ? base : undefined);
  if (!found) throw new Error(`${fromFile} imports "${specifier}", which resolves to no .ts or .mjs file`);
  const file = relative(ROOT, found).split("\\").join("/");
  return FOLDERS.includes(file.split("/")[0]) ? file : undefined;
}

/** Repository-relative file -> the repository-relative files under FOLDERS it imports (generated files count as targets). */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const files = FOLDERS.flatMap((f) => listTs(join(ROOT, f)))
    .map((p) => relative(ROOT, p).split("\\").join("/"))
    .filter((p) => !EXCLUDED.some((e) => p.startsWith(e)));
  for (const file of files) {
    const targets = new Set<string>();
    for (const match of readFileSync(join(ROOT, file), "utf8").matchAll(IMPORT)) {
      const target = resolveSpecifier(file, match[1]);
      if (target) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** For each file of a component, the shortest cycle through it (breadth-first inside the component), deduplicated. */
function cyclesOf(component: string[], graph: Map<string, Set<string>>): string[][] {
  const members = new Set(component);
  const seen = new Set<string>();
  const cycles: string[][] = [];
  for (const start of component) {
    const parent = new Map<string, string>();
    const queue = [start];
    let closing: string | undefined;
    while (queue.length > 0 && closing === undefined) {
      const v = queue.shift()!;
      for (const w of [...graph.get(v)!].sort()) {
        if (!members.has(w)) continue;
        if (w === start) {
          closing = v;
          break;
        }
        if (!parent.has(w)) {
          parent.set(w, v);
          queue.push(w);
        }
      }
    }
    if (closing === undefined) continue;
    const path = [closing];
    while (path[0] !== start) path.unshift(parent.get(path[0])!);
    // One cycle visited from different starts is the same cycle: key it by its rotation from the smallest file.
    const at = path.indexOf([...path].sort()[0]);
    const key = [...path.slice(at), ...path.slice(0, at)].join(" ");
    if (seen.has(key)) continue;
    seen.add(key);
    cycles.push([...path, start]);
  }
  return cycles;
}

const folderOf = (file: string) => file.split("/")[0];

describe("the production module graph", () => {
  const graph = importGraph();

  it("reads the imports it checks (sanity: the coordinator's server imports its store)", () => {
    assert.ok(graph.size > 100, `only ${graph.size} files found under ${FOLDERS.join(", ")}`);
    assert.ok(graph.get("coordinator/server.ts")?.size, "coordinator/server.ts has no imports the check can read");
  });

  it("has no import cycles", () => {
    const report = cyclicComponents(graph).map((component) => {
      const chains = cyclesOf(component, graph).map((cycle) => `    ${cycle.join(" -> ")}`);
      return `  ${component.length} files tied together: ${component.join(", ")}\n${chains.join("\n")}`;
    });
    if (report.length > 0) assert.fail(`import cycles (break each by moving what both sides need into a leaf module):\n${report.join("\n")}`);
  });

  it("keeps the folder rules of docs/architecture.md", () => {
    const allowed: Record<string, string[]> = {
      protocol: ["protocol"],
      "firmware-pins": ["firmware-pins"],
      coordinator: ["coordinator", "protocol", "firmware-pins"],
      "cell-agent": ["cell-agent", "protocol", "firmware-pins"],
      simulators: ["simulators", "cell-agent", "protocol", "firmware-pins"],
    };
    const broken: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        if (!allowed[folderOf(file)].includes(folderOf(target))) broken.push(`  ${file} -> ${target}`);
      }
    }
    if (broken.length > 0) assert.fail(`imports across folders that docs/architecture.md forbids:\n${broken.join("\n")}`);
  });
});

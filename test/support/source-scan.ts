/**
 * Reads the project's production sources for the tests that guard a house rule by grepping (the
 * recording layout in protocol/, the kind switch in the registry): every .ts file under a folder except
 * specs and declarations, with comments blanked out so that line numbers still hold.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Production source files under `folder` (relative to the repository), as repository-relative paths. */
export function productionSources(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(m?ts|m?js)$/.test(name) && !name.endsWith(".d.ts") && !/\.spec\.m?[tj]s$/.test(name)) out.push(relative(REPO_ROOT, path));
    }
  };
  walk(join(REPO_ROOT, folder));
  return out.sort();
}

/** Blanks out comments (keeping line breaks); strings are kept as they are. */
export function withoutComments(source: string): string {
  let out = "";
  let i = 0;
  let quote: string | undefined;
  while (i < source.length) {
    const c = source[i];
    if (quote) {
      out += c;
      if (c === "\\") {
        out += source[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (c === quote) quote = undefined;
      i++;
    } else if (c === '"' || c === "'" || c === "`") {
      quote = c;
      out += c;
      i++;
    } else if (c === "/" && source[i + 1] === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** "file:line: text" for every line of the production sources under `folders` that matches `pattern`. */
export function findInSources(folders: readonly string[], pattern: RegExp, skip: (file: string) => boolean = () => false): string[] {
  const hits: string[] = [];
  for (const file of folders.flatMap(productionSources)) {
    if (skip(file)) continue;
    const lines = withoutComments(readFileSync(join(REPO_ROOT, file), "utf8")).split("\n");
    lines.forEach((line, i) => {
      if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
    });
  }
  return hits;
}

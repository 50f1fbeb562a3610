/**
 * A TypeScript entry point as one bundled ES module, so the processes the repository starts many
 * times (simulated cells, the `assay` command in the repository, coordinators and agents the tests
 * start) run on plain Node instead of through tsx's loader.
 *
 * Why: under `node --import tsx`, Node 20 runs tsx's module hooks on a loader thread that resolves,
 * reads and transforms every one of the ~170 modules a simulated cell imports, on every start, and
 * the main thread parses each module's source map: about 1.2 s of CPU of a cell's 2 s start
 * (measured with --cpu-prof; the bundle imports in about 0.8 s). The suite and `npm start` start
 * dozens of cells; the test suite is CPU-bound on two cores.
 *
 * The bundle keeps each file's meaning:
 * - `import.meta.url` is replaced, file by file, with that file's own URL, so paths a module
 *   computes from its location (catalogues, worker entries, createRequire) still point into the
 *   source tree;
 * - `process.argv[1]` is set to the entry's path, so an entry's "am I the main module" check holds;
 * - packages stay external (resolved from the repository's node_modules, as the bundle is written
 *   inside it, under node_modules/.cache/assay/), names are kept, and a linked source map lets
 *   `node --enable-source-maps` report stack traces in the .ts files;
 * - a package that can be loaded with `require` as CommonJS is: `import x from "pkg"` becomes a
 *   `require("pkg")` behind esbuild's interop (named imports are properties of module.exports, the
 *   default import is module.exports, as under Node's own import). Imported, a CommonJS package is
 *   first scanned by Node's cjs-module-lexer for its export names, file by file, and dual packages
 *   load their ES build, module by module: 0.6 s of CPU against 0.26 s for the same packages
 *   required (grpc-js, mcap, crc32, serialport, sharp, ws, prom-client, jpeg-js, msgpack), and the
 *   lexer's parser was compiled by TurboFan four times in one cell. Packages with no CommonJS entry
 *   (mujoco-js, roslib) stay `import`s.
 *
 * Freshness: a manifest records every input file's size and modification time; the bundle is reused
 * while all match and rebuilt (esbuild, a few hundred ms) when any changed. Two processes building
 * at once both write complete files and rename them into place, so a reader never sees half a bundle.
 * When esbuild is missing or the build fails, `compiledEntry` resolves to undefined and the caller
 * runs the entry through tsx as before.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire, isBuiltin } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CACHE_DIR = join(REPO, "node_modules", ".cache", "assay");
/** Changing how bundles are made invalidates every cached one. */
const FORMAT = 2;

const building = new Map();
/**
 * The expression each own file's URL replaces, spelled in parts: written as one string literal here, the
 * replacement broke this file's own source whenever an entry imports it (the fleet launcher, so `npm start`
 * and every coordinator the tests start, which all ran through tsx instead).
 */
const IMPORT_META_URL = ["import", "meta", "url"].join(".");

/**
 * The path of a fresh bundle of `entry` (a .ts file), built if needed; undefined when it cannot be
 * built (the reason goes to `log`, once per entry and process).
 */
export function compiledEntry(entry, log = () => {}) {
  const absolute = resolve(entry);
  // Named by the entry's path too: checkouts sharing one node_modules (git worktrees) keep their own bundles.
  const name = `${basename(absolute).replace(/\.[cm]?ts$/, "")}-${createHash("sha256").update(absolute).digest("hex").slice(0, 12)}`;
  const bundle = join(CACHE_DIR, `${name}.mjs`);
  const manifestPath = join(CACHE_DIR, `${name}.json`);
  if (isFresh(manifestPath, absolute, bundle)) return Promise.resolve(bundle);
  let pending = building.get(absolute);
  if (!pending) {
    pending = build(absolute, name, bundle, manifestPath).catch((error) => {
      // esbuild's message is "Build failed with 1 error:"; the error itself is in `errors`.
      const first = error.errors?.[0];
      const why = first ? `${first.location ? `${first.location.file}:${first.location.line}: ` : ""}${first.text}` : error.message.split("\n")[0];
      log(`running ${absolute} through tsx: it could not be bundled (${why})`);
      return undefined;
    });
    building.set(absolute, pending);
    pending.finally(() => building.delete(absolute));
  }
  return pending;
}

/**
 * Node's arguments for running `entry` with `args`: the bundle with source maps, or tsx's loader
 * when there is no bundle.
 */
export async function nodeArgsFor(entry, args = [], log) {
  const bundle = await compiledEntry(entry, log);
  return bundle ? ["--enable-source-maps", bundle, ...args] : ["--import", "tsx", resolve(entry), ...args];
}

/**
 * Loads `entry` (a .ts file) into this thread: its bundle when one can be built, else through tsx's
 * loader, registered here. For worker threads, which do not inherit the loader the process runs under.
 */
export async function importEntry(entry, log) {
  const bundle = await compiledEntry(entry, log);
  if (bundle) return import(pathToFileURL(bundle).href);
  const { register } = await import("tsx/esm/api");
  register();
  return import(pathToFileURL(resolve(entry)).href);
}

function isFresh(manifestPath, entry, bundle) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    statSync(bundle);
  } catch {
    return false;
  }
  if (manifest.format !== FORMAT || manifest.entry !== entry || !Array.isArray(manifest.inputs)) return false;
  for (const [file, size, mtimeMs] of manifest.inputs) {
    try {
      const stat = statSync(file);
      if (stat.size !== size || stat.mtimeMs !== mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}

const NAMESPACE = "assay-require";

/**
 * An esbuild plugin: a bare import of a package whose `require` entry is CommonJS resolves to a
 * one-line CommonJS module, `module.exports = require("pkg")`, whose `require` stays external (the
 * bundle's banner defines `require` from the entry's location). Anything else (node: modules, ES-only
 * packages, a name that does not resolve) is left to esbuild's `packages: "external"`.
 */
function requireCommonJs(entry) {
  const formatOf = new Map();
  const isCommonJs = (specifier, importer) => {
    const key = `${dirname(importer)}\0${specifier}`;
    let known = formatOf.get(key);
    if (known === undefined) {
      known = false;
      try {
        known = commonJsFile(createRequire(importer).resolve(specifier));
      } catch {
        // Not requirable (ES-only exports, or missing): left as an import.
      }
      formatOf.set(key, known);
    }
    return known;
  };
  return {
    name: "require-commonjs",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.namespace === NAMESPACE) return { path: args.path, external: true };
        if (isBuiltin(args.path) || args.path.startsWith("node:")) return undefined;
        if (args.kind !== "import-statement" && args.kind !== "dynamic-import") return undefined;
        const importer = args.importer && args.namespace === "file" ? args.importer : entry;
        return isCommonJs(args.path, importer) ? { path: args.path, namespace: NAMESPACE } : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: "js" }));
    },
  };
}

/** Whether Node loads `file` as CommonJS: .cjs, or .js/.node/.json under a package.json without "type": "module". */
function commonJsFile(file) {
  if (file.endsWith(".cjs") || file.endsWith(".node")) return true;
  if (!file.endsWith(".js")) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        return JSON.parse(readFileSync(manifest, "utf8")).type !== "module";
      } catch {
        return false;
      }
    }
    if (dirname(dir) === dir) return true;
  }
}

async function build(entry, name, bundle, manifestPath) {
  const { build: esbuild, version } = await import("esbuild");
  const ownFile = /\.(ts|mts|cts|js|mjs|cjs)$/;
  /** Each own file's size and time as read (a file edited during the build then counts as changed). */
  const seen = new Map();
  const fileMeta = {
    name: "file-meta",
    setup(b) {
      b.onLoad({ filter: ownFile }, async (args) => {
        if (args.path.includes(`${"/"}node_modules${"/"}`)) return undefined;
        const stat = statSync(args.path);
        seen.set(args.path, [stat.size, stat.mtimeMs]);
        const source = await readFile(args.path, "utf8");
        const contents = source.replaceAll(IMPORT_META_URL, JSON.stringify(pathToFileURL(args.path).href));
        return { contents, loader: /\.[cm]?ts$/.test(args.path) ? "ts" : "js" };
      });
    },
  };
  const packagesAsRequire = requireCommonJs(entry);
  const result = await esbuild({
    entryPoints: [entry],
    bundle: true,
    write: false,
    outfile: bundle,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    sourcemap: "linked",
    keepNames: true,
    metafile: true,
    logLevel: "silent",
    plugins: [fileMeta, packagesAsRequire],
    banner: {
      js: [
        `import { createRequire as __assayCreateRequire } from "node:module";`,
        `const require = __assayCreateRequire(${JSON.stringify(pathToFileURL(entry).href)});`,
        `process.argv[1] = ${JSON.stringify(entry)};`,
      ].join("\n"),
    },
  });
  mkdirSync(CACHE_DIR, { recursive: true });
  // The one-line modules of the require plugin are no files: the package's version is not tracked (as before).
  const inputs = Object.keys(result.metafile.inputs).filter((file) => !file.startsWith(`${NAMESPACE}:`)).map((file) => {
    const path = resolve(file);
    const known = seen.get(path);
    if (known) return [path, ...known];
    const stat = statSync(path);
    return [path, stat.size, stat.mtimeMs];
  });
  const unique = `${process.pid}-${Date.now()}`;
  // The map first, then the bundle that names it, then the manifest that vouches for both.
  const outputs = [...result.outputFiles.filter((o) => o.path.endsWith(".map")), ...result.outputFiles.filter((o) => !o.path.endsWith(".map"))];
  for (const out of outputs) {
    const temporary = `${out.path}.${unique}`;
    writeFileSync(temporary, out.contents);
    renameSync(temporary, out.path);
  }
  const temporary = `${manifestPath}.${unique}`;
  writeFileSync(temporary, JSON.stringify({ format: FORMAT, entry, esbuild: version, name, inputs }));
  renameSync(temporary, manifestPath);
  return bundle;
}

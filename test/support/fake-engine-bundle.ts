/**
 * The fake OCI engine's commands (fake-container-engine.ts) bundled to plain JavaScript, for
 * `fake-engine-bin/docker` to run on bare node. Every engine call is its own process: the container
 * runtime makes some 85 of them in container-runtime.spec.ts, and loading tsx in each cost ~0.3 s CPU,
 * most of that spec's time. (Not scripts/compiled-entry.mjs: its bundle takes in the policy servers a
 * container starts, whose packages would then load on every command, ~0.25 s instead of ~0.09 s.)
 */
import { build } from "esbuild";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = resolve(dirname(fileURLToPath(import.meta.url)), "fake-container-engine.ts");

/**
 * Writes `<dir>/engine.mjs` (dir: the engine's state folder), built from the source on every call so it
 * is never stale. The policy servers a container runs stay out: a container's own process runs the
 * source with tsx (those servers read files beside their modules), and leaving them out keeps their
 * packages from loading on every command.
 */
export async function bundleFakeEngine(dir: string): Promise<void> {
  await build({
    entryPoints: [SOURCE], outfile: join(dir, "engine.mjs"), format: "esm", platform: "node", target: "node20", bundle: true, logLevel: "error",
    plugins: [{ name: "servers-stay-out", setup: (b) => b.onResolve({ filter: /-server\.js$/ }, (args) => ({ path: args.path, external: true })) }],
  });
}

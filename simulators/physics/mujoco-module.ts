/**
 * The MuJoCo WebAssembly module (mujoco-js, MuJoCo 3.3.8), loaded once per process at import time
 * (top-level await) so that SimWorld's constructor can stay synchronous. Models are compiled from
 * MJCF text written into the module's in-memory file system; identical MJCF reuses the compiled model.
 */
import loadMujoco from "mujoco-js";
import type { MainModule, MjModel } from "mujoco-js";

const loadStartedMs = performance.now();
/** The loaded module. */
export const mujoco: MainModule = await loadMujoco();
/** Wall time the module took to load in this process, ms (for the benchmark). */
export const MUJOCO_LOAD_MS = performance.now() - loadStartedMs;

const MODEL_DIR = "/assay-mjcf";
const compiled = new Map<string, MjModel>();
let fsReady = false;

/**
 * The compiled model of an MJCF document. Models are cached by their text (a process compiles each
 * distinct scene layout once); callers must not delete them.
 */
export function compileMjcf(xml: string): MjModel {
  const cached = compiled.get(xml);
  if (cached) return cached;
  const fs = (mujoco as unknown as { FS: { mkdir(path: string): void; writeFile(path: string, data: string): void; unlink(path: string): void } }).FS;
  if (!fsReady) {
    fs.mkdir(MODEL_DIR);
    fsReady = true;
  }
  const path = `${MODEL_DIR}/scene-${compiled.size}.xml`;
  fs.writeFile(path, xml);
  try {
    const model = mujoco.MjModel.loadFromXML(path);
    if (!model) throw new Error("MjModel.loadFromXML returned nothing");
    // NOTE: a long-lived cell sees few distinct layouts (distractor sets are small), but bound the
    // cache anyway so a pathological stream of layouts cannot grow wasm memory without limit.
    if (compiled.size >= 64) {
      const [oldestXml] = compiled.keys();
      compiled.delete(oldestXml);
    }
    compiled.set(xml, model);
    return model;
  } catch (error) {
    throw new Error(`MuJoCo could not compile the generated scene MJCF: ${mujocoErrorText(error)}`, { cause: error });
  } finally {
    fs.unlink(path);
  }
}

/** The message of an error thrown by the wasm module (C++ exceptions carry only a pointer). */
export function mujocoErrorText(error: unknown): string {
  const excPtr = (error as { excPtr?: number }).excPtr;
  const describe = (mujoco as unknown as { getExceptionMessage?: (ptr: number) => [string, string] }).getExceptionMessage;
  if (excPtr !== undefined && describe) return describe(excPtr).filter(Boolean).join(": ");
  return error instanceof Error ? error.message : String(error);
}

/** Numeric value of a MuJoCo enum member as the bindings expose it ({ value } objects). */
export function enumValue(member: unknown): number {
  return typeof member === "number" ? member : (member as { value: number }).value;
}

/**
 * Which instruments a simulated cell has, from the environment catalog. The catalog is data owned
 * by the coordinator (coordinator/catalog/environments.json); we read the file, never its code.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Instrument {
  kind: string;
  name?: string;
}

const CATALOG_PATH = join(dirname(fileURLToPath(import.meta.url)), "..", "coordinator", "catalog", "environments.json");

/** Instruments of an environment pin such as "tabletop@1"; throws with the known pins when missing. */
export function instrumentsOf(environmentPin: string, catalogPath = CATALOG_PATH): Instrument[] {
  const catalog = JSON.parse(readFileSync(catalogPath, "utf8")) as { environments: Array<{ name: string; version: number; instruments: Instrument[] }> };
  const found = catalog.environments.find((e) => `${e.name}@${e.version}` === environmentPin);
  if (!found) {
    const known = catalog.environments.map((e) => `${e.name}@${e.version}`).join(", ");
    throw new Error(`environment "${environmentPin}" is not in the catalog; known environments: ${known}`);
  }
  return found.instruments;
}

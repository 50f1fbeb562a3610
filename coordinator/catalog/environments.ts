/**
 * The versioned environment catalogue (environments.json). Ids are `<name>@<version>`; a bare name
 * means the newest version of that name.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type EnvironmentClass = "bare" | "standard" | "replica" | "instrumented-replica";
export const ENVIRONMENT_CLASSES: readonly EnvironmentClass[] = ["bare", "standard", "replica", "instrumented-replica"];

export interface Instrument {
  kind: string;
  name?: string;
}

export interface CatalogEnvironment {
  name: string;
  version: number;
  class: EnvironmentClass;
  description: string;
  instruments: Instrument[];
  objects: string[];
  lighting: string[];
  distractor_sets: string[];
  released: string;
}

const here = dirname(fileURLToPath(import.meta.url));

export function loadEnvironments(path = join(here, "environments.json")): CatalogEnvironment[] {
  return (JSON.parse(readFileSync(path, "utf8")) as { environments: CatalogEnvironment[] }).environments;
}

export function environmentId(env: CatalogEnvironment): string {
  return `${env.name}@${env.version}`;
}

/** Names of the environment's camera instruments. */
export function cameraNames(env: CatalogEnvironment): string[] {
  return env.instruments.filter((i) => i.kind === "camera" && i.name).map((i) => i.name as string);
}

/** Finds `name@version`, or the newest version of a bare `name`; undefined when absent or malformed. */
export function findEnvironment(envs: readonly CatalogEnvironment[], text: string): CatalogEnvironment | undefined {
  const match = /^([a-z0-9][a-z0-9-]*)(?:@(\d+|latest))?$/.exec(text.trim());
  if (!match) return undefined;
  const named = envs.filter((e) => e.name === match[1]);
  if (match[2] === undefined || match[2] === "latest") return named.sort((a, b) => b.version - a.version)[0];
  return named.find((e) => e.version === Number(match[2]));
}

/**
 * Frozen benchmark suites (coordinator/catalog/suites.json). A suite is addressed as
 * `<name>@<version>` (a bare name means the newest version) and fixes, per task, the environment,
 * the episode count and the perturbation schedule (with its seed), plus the scoring rule. Kind
 * `eval` runs a suite; GET /v1/suites lists them.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface SuiteTask {
  /** Frozen task revision `<name>@v<N>`. */
  task: string;
  /** `<name>@<version>`. */
  environment: string;
  episodes: number;
  perturbation: { layout_jitter_mm?: number; lighting?: string[]; distractors?: string; seed: number };
}

export interface Suite {
  name: string;
  version: number;
  description: string;
  frozen: string;
  tasks: SuiteTask[];
  scoring: Record<string, unknown>;
}

const suitesPath = join(dirname(fileURLToPath(import.meta.url)), "..", "catalog", "suites.json");
let cache: Suite[] | undefined;

export function loadSuites(): Suite[] {
  cache ??= (JSON.parse(readFileSync(suitesPath, "utf8")) as { suites: Suite[] }).suites;
  return cache;
}

export function suiteId(suite: Pick<Suite, "name" | "version">): string {
  return `${suite.name}@${suite.version}`;
}

/** The suite `<name>@<version>`, or the newest version of a bare `<name>`; undefined when unknown. */
export function findSuite(id: string, suites: readonly Suite[] = loadSuites()): Suite | undefined {
  const [name, version] = id.split("@");
  return suites
    .filter((s) => s.name === name && (version === undefined || String(s.version) === version))
    .sort((a, b) => b.version - a.version)[0];
}

/** A suite as GET /v1/suites shows it. */
export function suiteView(suite: Suite): Record<string, unknown> {
  return {
    id: suiteId(suite),
    object: "suite",
    name: suite.name,
    version: suite.version,
    description: suite.description,
    frozen: suite.frozen,
    tasks: suite.tasks,
    environments: [...new Set(suite.tasks.map((t) => t.environment))],
    perturbation_schedules: suite.tasks.map((t) => ({ task: t.task, environment: t.environment, ...t.perturbation })),
    scoring: suite.scoring,
  };
}

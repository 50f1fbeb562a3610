/** The catalogue: robots, environments and benchmark suites. */
import { z } from "zod";
import { ROBOT_CLASSES, TIERS } from "../../../firmware-pins/pins.js";
import { component, queryEnum } from "./common.js";

const ENVIRONMENT_CLASSES = ["bare", "standard", "replica", "instrumented-replica"] as const;
const robotClasses = ROBOT_CLASSES as unknown as readonly [string, ...string[]];
const tiers = TIERS as unknown as readonly [string, ...string[]];

/** GET /v1/robots query. */
export const RobotListQuery = z.object({
  class: queryEnum("class", robotClasses, "robot class"),
  tier: queryEnum("tier", tiers, "soak (commodity pods) or verify (verification-tier hardware)"),
});

/** The spec's Robot. */
export const Robot = component("Robot", z.strictObject({
  id: z.string().describe("model name without firmware"),
  object: z.literal("robot"),
  class: z.enum(robotClasses),
  dof: z.number().int().min(1),
  hands: z.string().describe("end-effector name"),
  firmwares: z.array(z.string()).describe("installed firmware versions"),
  cells: z.number().int().min(0),
  duty_cycle_pct: z.number().min(0).max(100).describe("live"),
  tier: z.enum(tiers),
}));

/** GET /v1/environments query. */
export const EnvironmentListQuery = z.object({ class: queryEnum("class", ENVIRONMENT_CLASSES, "environment class") });

/** A catalogue environment, versioned; id `<name>@<version>`. */
export const Environment = component("Environment", z.strictObject({
  id: z.string().describe("<name>@<version>"),
  object: z.literal("environment"),
  name: z.string(),
  version: z.number().int(),
  class: z.enum(ENVIRONMENT_CLASSES),
  description: z.string(),
  instruments: z.array(z.strictObject({ kind: z.string(), name: z.string().optional() })),
  objects: z.array(z.string()),
  lighting: z.array(z.string()).describe("lighting presets"),
  distractor_sets: z.array(z.string()),
  released: z.string(),
  status: z.enum(["online", "offline"]).describe("online when a connected cell is in it"),
  cells: z.number().int().min(0),
}));

/** A frozen benchmark suite (kind eval runs one). */
export const Suite = component("Suite", z.strictObject({
  id: z.string().describe("<name>@<version>"),
  object: z.literal("suite"),
  name: z.string(),
  version: z.number().int(),
  description: z.string(),
  frozen: z.string(),
  tasks: z.array(z.strictObject({
    task: z.string(), environment: z.string(), episodes: z.number().int(),
    perturbation: z.strictObject({ layout_jitter_mm: z.number().optional(), lighting: z.array(z.string()).optional(), distractors: z.string().optional(), seed: z.number().int() }),
  })),
  environments: z.array(z.string()),
  perturbation_schedules: z.array(z.looseObject({ task: z.string(), environment: z.string() })),
  scoring: z.looseObject({}),
}));

/**
 * The optional fields every kind accepts with the same rules: priority, perturbation, data,
 * max_budget_usd, interventions, publish. `validateCommon` checks them against the unit's scene
 * and returns the priority and the run seed (perturbation.seed, else random).
 */
import { randomInt } from "node:crypto";
import { environmentId, type CatalogEnvironment } from "../catalog/environments.js";
import { contract, fail, isPlainObject, oneOf, q, rejectUnknownKeys } from "./field-checks.js";
import {
  INTERVENTIONS, PRIORITIES, PUBLISH, RETENTION_MAX_H, RETENTION_MIN_H, retentionHours, type ValidateRunContext,
} from "./run-request.js";

/** Optional fields every kind accepts, with the same rules as kind `run`. */
export const COMMON_FIELDS = ["kind", "priority", "perturbation", "data", "max_budget_usd", "interventions", "publish", "instructions"] as const;

export interface CommonChoices {
  priority: string;
  seed: number;
}

/**
 * Validates the shared optional fields against `environment` (perturbation presets) and returns
 * priority and run seed (perturbation.seed, else random).
 */
export function validateCommon(body: Record<string, unknown>, ctx: ValidateRunContext, environment: CatalogEnvironment): CommonChoices {
  const priority = oneOf("priority", body.priority, PRIORITIES, "standard");
  const perturbation = validatePerturbation(body.perturbation, environment);
  validateData(body.data);
  if (body.max_budget_usd !== undefined && !(typeof body.max_budget_usd === "number" && Number.isFinite(body.max_budget_usd) && body.max_budget_usd > 0)) {
    contract(`max_budget_usd must be a positive number of US dollars; got ${q(body.max_budget_usd)}`);
  }
  oneOf("interventions", body.interventions, INTERVENTIONS, "none");
  const publish = oneOf("publish", body.publish, PUBLISH, "private");
  if (publish === "leaderboard" && !ctx.leaderboardOptIn) {
    fail("publish_forbidden", `publish "leaderboard" needs the account's leaderboard opt-in; submit publish "private" or ask support to opt the account in`);
  }
  const seed = perturbation?.seed ?? (ctx.randomSeed ?? (() => randomInt(0, 0x7fffffff)))();
  return { priority, seed };
}

export function validatePerturbation(value: unknown, env: CatalogEnvironment): { seed?: number } | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) contract(`perturbation must be an object {layout_jitter_mm, lighting, distractors, seed}; got ${q(value)}`);
  rejectUnknownKeys("perturbation", value, ["layout_jitter_mm", "lighting", "distractors", "seed"]);
  const jitter = value.layout_jitter_mm;
  if (jitter !== undefined && !(typeof jitter === "number" && Number.isFinite(jitter) && jitter >= 0)) {
    contract(`perturbation.layout_jitter_mm must be a number >= 0 (millimetres); got ${q(jitter)}`);
  }
  if (value.lighting !== undefined) {
    if (!Array.isArray(value.lighting) || value.lighting.length === 0) contract(`perturbation.lighting must be a non-empty array of lighting presets of ${environmentId(env)} (${env.lighting.join(", ")}); got ${q(value.lighting)}`);
    for (const preset of value.lighting) {
      if (typeof preset !== "string" || !env.lighting.includes(preset)) {
        contract(`perturbation.lighting: ${environmentId(env)} has no lighting preset ${q(preset)}; its presets: ${env.lighting.join(", ")}`);
      }
    }
  }
  if (value.distractors !== undefined && (typeof value.distractors !== "string" || !env.distractor_sets.includes(value.distractors))) {
    contract(`perturbation.distractors: ${environmentId(env)} has no distractor set ${q(value.distractors)}; its sets: ${env.distractor_sets.join(", ")}`);
  }
  const seed = value.seed;
  if (seed !== undefined && !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 0x7fffffff)) {
    contract(`perturbation.seed must be an integer 0..2147483647; got ${q(seed)}`);
  }
  return { seed: seed as number | undefined };
}

export function validateData(value: unknown): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) contract(`data must be an object {retention, train_on_failures}; got ${q(value)}`);
  rejectUnknownKeys("data", value, ["retention", "train_on_failures"]);
  if (value.retention !== undefined) {
    const hours = typeof value.retention === "string" ? retentionHours(value.retention) : undefined;
    if (hours === undefined || hours < RETENTION_MIN_H || hours > RETENTION_MAX_H) {
      contract(`data.retention must be a duration from "1h" to "365d" written as <n>h or <n>d; got ${q(value.retention)}`);
    }
  }
  if (value.train_on_failures !== undefined && typeof value.train_on_failures !== "boolean") {
    contract(`data.train_on_failures must be true or false; got ${q(value.train_on_failures)}`);
  }
}

/** Quotes (POST /v1/quote), usage (GET /v1/usage) and budgets (PUT /v1/budgets). */
import { z } from "zod";
import { component, NonNegative, Timestamp } from "./common.js";
import { Priority } from "./run-request.js";

const TIERS = ["soak", "verify"] as const;
const ENVIRONMENT_CLASSES = ["bare", "standard", "replica", "instrumented-replica"] as const;

/** A quote line: one unit's episodes priced at its tier and environment class. */
const QuoteUnit = z.strictObject({
  key: z.string(), robot: z.string(), environment: z.string(), n: z.number().int().min(0),
  tier: z.enum(TIERS), environment_class: z.enum(ENVIRONMENT_CLASSES),
  robot_hour_usd: NonNegative, environment_hour_usd: NonNegative,
  robot_hours: NonNegative, environment_hours: NonNegative, cost_usd: NonNegative,
});

/** POST /v1/quote response (coordinator/billing/quotes.ts). Both meters appear in every quote. */
export const Quote = component("Quote", z.strictObject({
  object: z.literal("quote"),
  id: z.string().describe("pass as quote_id to POST /v1/runs with the same body before it expires"),
  created: Timestamp,
  expires: Timestamp,
  n: z.number().int().min(0),
  n_basis: z.enum(["planned", "maximum"]).describe("maximum: a kind that makes episodes as it goes (threshold) is quoted at its planned maximum"),
  robot_hours: NonNegative,
  environment_hours: NonNegative,
  cost_usd: NonNegative,
  price: z.strictObject({
    tier: z.enum(TIERS).nullable().describe("null when units differ (see units)"),
    environment_class: z.enum(ENVIRONMENT_CLASSES).nullable(),
    priority: Priority,
    robot_hour_usd: NonNegative.nullable(),
    environment_hour_usd: NonNegative.nullable(),
    priority_multiplier: NonNegative,
    episode_estimate_s: NonNegative,
    max_duration_s: NonNegative,
    reset_allowance_s: NonNegative,
  }),
  units: z.array(QuoteUnit),
  pins: z.looseObject({ robot: z.string(), environment: z.string(), task: z.string(), perturbation_rev: z.string() }),
  max_budget_usd: z.number().nullable(),
}));

/** The account's monthly budget as usage shows it. */
export const BudgetStatus = z.strictObject({
  monthly_usd: NonNegative.nullable().describe("null when no budget is set"),
  hard: z.boolean(),
  remaining_usd: NonNegative.nullable(),
});

/** GET /v1/usage query. */
export const UsageQuery = z.object({
  period: z.string({ error: "query parameter period is required as YYYY-MM (a UTC month, e.g. 2026-11)" })
    .max(7, { error: "query parameter period is required as YYYY-MM (a UTC month, e.g. 2026-11)" })
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, { error: "query parameter period is required as YYYY-MM (a UTC month, e.g. 2026-11)" })
    .describe("a UTC month, YYYY-MM"),
});

/** The spec's Usage. */
export const Usage = component("Usage", z.strictObject({
  object: z.literal("usage"),
  period: z.string(),
  robot_hours: z.strictObject({ verify: NonNegative, soak: NonNegative }),
  env_hours: z.strictObject({ bare: NonNegative, standard: NonNegative, replica: NonNegative, "instrumented-replica": NonNegative }),
  usd_total: NonNegative,
  operator_reset_s: NonNegative.describe("seconds people spent setting scenes (operator resets) for the attempts metered in the month; 0 on simulated cells that reset themselves"),
  operator_label_s: NonNegative.describe("seconds cells waited for people's success labels (tasks with operator.success) of the episodes finished in the month, labelled or unlabelled"),
  budget: BudgetStatus,
}));

/** PUT /v1/budgets body. */
export const BudgetRequest = component("BudgetRequest", z.strictObject({
  monthly_usd: z.number({ error: "monthly_usd is required: a number of US dollars >= 0" })
    .min(0, { error: "monthly_usd is required: a number of US dollars >= 0" }),
  hard: z.boolean({ error: "hard must be true or false" }).optional()
    .describe("when true, new work is rejected and running work is stopped at the cap with monthly_budget_exceeded"),
  remaining_usd: z.number({ error: "remaining_usd, when sent, must be a number (it is computed from usage and ignored here)" }).optional()
    .describe("computed from usage; accepted and ignored"),
}, { error: `request body must be a JSON object {"monthly_usd": <number>, "hard": <boolean>}` }));

/** PUT /v1/budgets response. */
export const Budget = component("Budget", z.strictObject({ monthly_usd: NonNegative, hard: z.boolean() }));

/** GET /v1/statistics/priors: the headline's current priors per robot model and environment class. */
import { z } from "zod";
import { ENVIRONMENT_CLASSES } from "../../catalog/environments.js";
import { component, listOf } from "./common.js";
import { HeadlinePrior } from "./runs.js";

/** One robot model and environment class with the prior a run submitted now would use. */
export const HeadlinePriorEntry = component("HeadlinePriorEntry", z.strictObject({
  object: z.literal("headline_prior"),
  robot_model: z.string().describe("robot model id, as GET /v1/robots lists it"),
  environment_class: z.enum(ENVIRONMENT_CLASSES),
  prior: HeadlinePrior.describe("source \"fleet\" once enough completed multi-cell runs exist, else \"default\" (docs/statistics.md, \"The prior learns from the fleet\")"),
}).describe("The prior of the model-level interval for runs of this robot model in environments of this class, as submitted now."));

export const HeadlinePriorList = listOf(HeadlinePriorEntry, {
  description: "Every robot model of the catalogue x every environment class, with the prior a run submitted now gets. Fitted priors only: no run's counts.",
});

/** Leaderboards (docs/api.md, "Leaderboards"): public, read-only. */
import { z } from "zod";
import { component, Timestamp } from "./common.js";

const Interval = z.tuple([z.number(), z.number()]);

const BoardPins = z.strictObject({
  kind: z.enum(["suite", "task"]),
  subject: z.string().describe("the frozen suite (tabletop-basics@1) or published task revision (pick-cube@v1)"),
  robot: z.string().describe("<model>@<firmware>"),
  environment: z.string().nullable().describe("task boards: the environment; suite boards: null (the suite fixes its tasks' environments)"),
  perturbation_rev: z.string(),
  perturbation: z.record(z.string(), z.unknown()).nullable().describe("task boards: the perturbation settings as submitted (null: none)"),
  instructions: z.string().describe("sampled or held_out"),
}).describe("what every result on the board shares; results differing in any of it are on another board");

const Entry = z.strictObject({
  rank: z.number().int().min(1),
  tier: z.number().int().min(1).describe("entries in one tier are not claimed to differ"),
  policy_name: z.string(),
  account: z.string().describe("the publishing account's display name"),
  run_id: z.string(),
  run_kind: z.string(),
  n: z.number().int(),
  successes: z.number().int(),
  success_rate: z.number(),
  ci95: Interval,
  interval_method: z.string(),
  tasks: z.array(z.strictObject({ task: z.string(), environment: z.string(), n: z.number().int(), success_rate: z.number(), ci95: Interval })).optional()
    .describe("suite boards: per task revision"),
  completed: Timestamp,
  report_url: z.url().describe("the run's citable report (JSON; ?format=pdf), public for a published run"),
});

/** What a board and its summary in the list both show. */
const BoardHead = {
  id: z.string(),
  object: z.literal("leaderboard"),
  kind: z.enum(["suite", "task"]),
  title: z.string(),
  pins: BoardPins,
  updated: Timestamp,
};

export const Leaderboard = component("Leaderboard", z.strictObject({
  ...BoardHead,
  entries: z.array(Entry).describe("in rank order: by the lower end of the 95% interval"),
  ranking: z.looseObject({
    tiers: z.number().int(),
    rule: z.looseObject({ description: z.string(), error_rate: z.string(), alpha: z.number() }),
    boundaries: z.array(z.looseObject({ after_rank: z.number().int(), separated: z.boolean() })),
  }).describe("the ordering and tier rule, and each boundary's test"),
  bradley_terry: z.looseObject({
    policies: z.array(z.looseObject({ id: z.string(), log_strength: z.number(), ci95: Interval.nullable() })),
    components: z.array(z.array(z.string())),
  }).nullable().describe("a Bradley-Terry fit of the paired compare runs published on the board; null when there are none"),
}).describe("A board of published results sharing the same pins."));

const LeaderboardSummary = z.strictObject({
  ...BoardHead,
  entries: z.number().int().describe("entries on the board"),
  leader: z.strictObject({ policy_name: z.string(), account: z.string(), success_rate: z.number(), ci95: Interval, n: z.number().int() }),
  url: z.url(),
});

export const LeaderboardList = component("LeaderboardList", z.strictObject({
  object: z.literal("list"),
  url: z.string(),
  data: z.array(LeaderboardSummary),
}));

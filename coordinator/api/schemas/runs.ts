/**
 * Run-domain responses: Run, Result, Episode, artifact listings, Report, the SSE event stream,
 * checkpoints, replays and purge receipts. Each describes what coordinator/lifecycle/run-view.ts,
 * run-results.ts and reports/report.ts return today. Kind-specific sections (a compare's test, a
 * matrix's regressions, a threshold's phases, ...) are allowed as additional properties of Run
 * and Result; the spec's common fields are described exactly.
 */
import { z } from "zod";
import { DEFAULT_SERIES_POINTS, MAX_SERIES_POINTS } from "../../artifacts/episode-series.js";
import { REPLAY_COUNT_MAX } from "../../replay/replay-run.js";
import {
  component, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NonNegative, queryEnum, queryInteger, queryText, RateSummary, Timestamp,
} from "./common.js";
import { DataPosture, EpisodesSpec, InstructionSet, Interventions, Perturbation, Policy, Priority, Publish, RUN_KIND_VALUES } from "./run-request.js";

import { RUN_STATUSES as RUN_STATUS_VALUES } from "../../domain/run-state.js";
import { INVALID_REASONS } from "../../domain/invalid-reasons.js";
import { METADATA_KEY_MAX_CHARS, METADATA_KEYS_MAX, METADATA_VALUE_MAX_CHARS } from "../../runs/run-labels.js";

export { RUN_STATUS_VALUES };
export const RunStatus = component("RunStatus", z.enum(RUN_STATUS_VALUES));

/** `resolved_pins`: what the submission's pins (and @latest) resolved to. */
export const ResolvedPins = component("ResolvedPins", z.looseObject({
  robot: z.string().describe("<model>@<firmware>"),
  environment: z.string().describe("<name>@<version>"),
  task: z.string().describe("<name>@v<N> (a pilot: the task id)"),
  perturbation_rev: z.string().describe("<set>@<version>"),
  models: z.record(z.string(), z.strictObject({
    id: z.string(), sha256: z.string(), bytes: z.number().int(), source: z.enum(["upload", "mirror"]),
  })).optional().describe("checkpoint policies: policy.hf as submitted -> the model the cells load, pinned by sha256"),
  images: z.record(z.string(), z.strictObject({
    ids: z.array(z.string()).describe("local image ids (sha256:...) the cells reported running; more than one when cells held different builds under one tag"),
    repo_digests: z.array(z.string()).describe("<repository>@sha256:... of those images; empty for images built on the cell"),
  })).optional().describe("container policies: image as submitted -> what the cells ran, by digest (added as episodes finish)"),
}).describe("records what @latest and bare names resolved to; multi-unit kinds may add fields"));

/** The interventions section of a Result (coordinator/runs/interventions.ts). */
export const InterventionSummary = z.strictObject({
  mode: z.string(),
  count: z.number().int().min(0),
  episodes_intervened: z.number().int().min(0),
  timestamps: z.array(z.strictObject({
    episode: z.string(), index: z.number().int(), unit: z.number().int().optional(), t_s: z.number().nullable(), kind: z.string(),
    by: z.string().optional().describe("\"operator\": a person at the operator station helped (absent: the simulator's own nudge)"),
  })),
  assisted_successes: z.number().int().min(0).describe("successes a human helped: failures of the policy, successes in `assisted`"),
});

const Interval = z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]);

/** A Beta prior as results record it (coordinator/stats/beta-binomial-rate.ts). */
const BetaPrior = z.strictObject({ family: z.literal("beta"), parameters: z.strictObject({ a: z.number().gt(0), b: z.number().gt(0) }) });

/** The prior a model-level interval was computed with. */
export const HeadlinePrior = component("HeadlinePrior", z.strictObject({
  rate: BetaPrior.describe("prior of the model-level rate μ: Beta(1/2, 1/2)"),
  icc: BetaPrior.describe("prior of the intra-cell correlation ρ: Beta(1, 9) by default"),
  source: z.string().describe("\"default\", or where a fitted prior came from"),
  fitted_on_runs: z.number().int().min(0).nullable().describe("runs a fitted prior was fitted on; null for the default"),
  fitted_at: z.string().nullable().describe("when a fitted prior was fitted (ISO 8601); null for the default"),
}).describe("recorded whole so that a result never changes after it is issued"));

/** Episodes per physical cell and both claims about them (coordinator/runs/result-summary.ts). */
export const CellBreakdown = component("CellBreakdown", z.strictObject({
  by_cell: z.array(z.strictObject({
    cell: z.string(), n: z.number().int().min(0), successes: z.number().int().min(0), success_rate: z.number().min(0).max(1),
  })),
  clusters: z.number().int().min(0).describe("cells that ran at least one of the episodes"),
  design_effect: z.number().gt(0).describe("n / effective_n (results issued before the beta-binomial headline: the Kish design effect, at least 1)"),
  effective_n: z.number().min(0).describe("mean(1 - mean) / posterior variance of the model-level rate: the independent episodes ci95 is worth"),
  ci95_these_cells: Interval.describe("these_cells.ci95, under its earlier name"),
  these_cells: z.strictObject({
    success_rate: z.number().min(0).max(1).describe("pooled k/n when every cell ran as many episodes, else the mean of the cells' rates"),
    ci95: Interval,
    interval_method: z.enum(["wilson", "stratified-wilson"]),
  }).optional().describe("the rate on these very cells (what they would do over many more episodes); ci95 is the model-level interval. Absent from results issued before the beta-binomial headline"),
  icc: z.strictObject({ median: z.number().min(0).max(1), upper95: z.number().min(0).max(1) }).optional()
    .describe("posterior median and 95% upper bound of the intra-cell correlation"),
  prior: HeadlinePrior.optional(),
  rests_on_prior: z.boolean().optional().describe("the model-level interval rests mostly on the prior: one cell, or cells that leave over half the prior variance of the ICC"),
  statement: z.array(z.string()).optional().describe("the headline in words, as the console, the CLI and the PDF report show it"),
}).describe("the episodes behind a rate, per physical cell, and the model-level and these-cells claims about them"));

/** The judge endpoint's verdicts and agreement with people (coordinator/runs/judge-section.ts). */
const JudgeSummary = z.strictObject({
  asked: z.number().int().min(0).describe("episodes the judge was asked about (counted and unlabelled)"),
  decided: z.number().int().min(0).describe("counted episodes whose outcome the judge's verdict decided alone"),
  audited: z.number().int().min(0).describe("episodes in the audit sample (a person judged them too, whatever the judge's confidence)"),
  low_confidence: z.number().int().min(0).describe("verdicts below the run's confidence_threshold (a person judged them too)"),
  failed: z.number().int().min(0).describe("episodes the judge gave no verdict on (timeout, HTTP error, malformed answer); a person judged them"),
  agreement: z.strictObject({
    n: z.number().int().min(0).describe("audited episodes with both the judge's verdict and a person's label"),
    agreement_rate: z.number().min(0).max(1).nullable(),
    cohen_kappa: z.number().min(-1).max(1).nullable().describe("Cohen's kappa of judge against people; null when either always said the same or n is 0"),
    kappa_ci95: z.tuple([z.number(), z.number()]).nullable().describe("95% Wald interval kappa ± 1.96·SE (Fleiss, Cohen & Everitt 1969), clipped to [-1, 1]"),
    kappa_se: z.number().min(0).nullable(),
    method: z.literal("cohen-kappa-fleiss-cohen-everitt-1969"),
    confusion: z.strictObject({
      both_success: z.number().int().min(0), judge_success_human_failure: z.number().int().min(0),
      judge_failure_human_success: z.number().int().min(0), both_failure: z.number().int().min(0),
    }).describe("the 2×2 counts of the audit sample: judge's verdict against the person's label"),
  }).describe("the judge's agreement with people on the audit sample (low-confidence episodes are left out: the judge's doubt picked them)"),
}).describe("runs with a judge endpoint (docs/judges.md)");

const Shown = z.enum(["a_higher", "b_higher", "none"]).describe("what the interval shows: a difference only when it excludes 0");
const SignedInterval = z.tuple([z.number().min(-1).max(1), z.number().min(-1).max(1)]);

/** One side of a compare headline (coordinator/runs/compare-headline.ts). */
const HeadlineArm = z.strictObject({
  label: z.string().describe("a compare's policy name, or a transfer's side (target, source)"),
  robot: z.string().nullable(),
  n: z.number().int().min(0),
  successes: z.number().int().min(0),
  success_rate: z.number().min(0).max(1),
  wilson95: Interval.describe("Wilson's 95% interval of successes / n"),
  ci95: Interval.nullable().describe("the side's model-level interval (its unit's ci95), when the Result carries one"),
  text: z.string().describe("the side in words, e.g. \"expert: 100% (20 of 20; 95% Wilson interval 83.9% to 100%)\""),
});

/** A compare's or transfer's answer up front: Result.headline. */
export const CompareHeadline = component("CompareHeadline", z.strictObject({
  difference: z.strictObject({
    of: z.string().describe("\"<A> - <B>\": a compare's first policy minus its second, a transfer's target minus source"),
    diff: z.number().min(-1).max(1), ci: SignedInterval, ci_level: z.number().gt(0).lt(1),
    method: z.string().describe("the comparison's interval method (docs/statistics.md)"),
    claim: z.string().describe("model: about a new cell of the robot model; these_cells: about the cells the episodes ran on"),
    shown: Shown,
    probability_a_greater: z.number().min(0).max(1).nullable(),
  }),
  these_cells: z.strictObject({ diff: z.number().min(-1).max(1), ci: SignedInterval, ci_level: z.number().gt(0).lt(1), method: z.string(), shown: Shown }).nullable()
    .describe("the claim about these cells beside a model-level difference; null when the difference is itself about these cells"),
  test: z.strictObject({ method: z.literal("mcnemar-exact"), p_value: z.number().min(0).max(1), n_discordant: z.number().int().min(0) }).nullable()
    .describe("a paired compare's exact McNemar test on its discordant pairs (about these cells)"),
  arms: z.tuple([HeadlineArm, HeadlineArm]),
  sentence: z.string().describe("the claim in one sentence; says no difference was shown when the interval contains 0"),
  lines: z.array(z.string()).describe("the sentence, the method and the claim about these cells with its test, each side's rate: what the console, the CLI and the PDF print"),
}).describe("Kinds compare and transfer: the difference with its direction, interval and test, in numbers rounded for people (4 significant digits) and in words (docs/api.md, \"The compare headline\")."));

/** One stage of the Result's stage funnel (coordinator/runs/stage-funnel.ts). */
export const StageFunnelRow = z.strictObject({
  stage: z.string(),
  reached: z.number().int().min(0).describe("finished episodes that reached this stage"),
  of: z.number().int().min(0).describe("finished episodes whose evaluation reports this stage"),
  stopped: z.number().int().min(0).describe("the policy's failures whose last stage reached is this one"),
});

/** The spec's Result; multi-unit kinds add their own sections (units, comparison, ...). */
export const Result = component("Result", z.looseObject({
  ...RateSummary.shape,
  failure_clusters: z.record(z.string(), z.number().int().min(0)).describe("cluster name to count"),
  robot_hours: NonNegative.describe("meter 1"),
  environment_hours: NonNegative.describe("meter 2"),
  cost_usd: NonNegative,
  artifacts: z.strictObject({
    mcap: z.url(), video: z.url(), ground_truth: z.url(), report_pdf: z.url(),
  }).describe("URLs of the run's episodes with query artifact=<kind>, and of the PDF report"),
  stages: z.record(z.string(), RateSummary).describe("per-stage rates"),
  stage_funnel: z.array(StageFunnelRow).optional().describe("the task's stages in order: episodes that reached each, and the policy's failures that stopped there (docs/failures.md)"),
  interventions: InterventionSummary.optional(),
  operator_time: z.strictObject({
    resets: z.number().int().min(0).describe("attempts whose reset waited for a person (finished, interrupted or invalidated)"),
    reset_s_total: z.number().min(0).describe("seconds people spent on resets, from the cell's awaiting_reset until the wait ended (confirmed, or aborted)"),
    reset_s_mean: z.number().min(0).describe("seconds per reset that waited for a person"),
    reset_s_per_episode: z.number().min(0).describe("reset_s_total over the episodes counted in n"),
  }).optional().describe("runs on cells whose resets need a person (real cells; simulated cells in operator mode)"),
  invalidated: z.array(z.strictObject({
    episode_id: z.string(), index: z.number().int().min(0), attempt: z.number().int().min(0), cell: z.string().nullable(),
    reason: z.enum(INVALID_REASONS), note: z.string().nullable(),
    outcome: z.enum(["success", "failure"]).nullable().describe("the outcome the invalid attempt had; never counted"),
    at: Timestamp,
  })).optional().describe("attempts a person marked invalid at the operator station; each episode ran again and only its valid attempt counts in n"),
  labels: z.strictObject({
    judged_by: z.enum(["instrument", "human", "judge", "mixed"]).describe("who decided the outcomes counted in n: instruments, a person's label (operator.success), the run's judge endpoint (docs/judges.md), or more than one of them"),
    labelled: z.number().int().min(0).describe("episodes counted in n whose outcome a person labelled"),
    judged: z.number().int().min(0).optional().describe("runs with a judge: episodes counted in n whose outcome the judge's verdict decided alone"),
    judge: JudgeSummary.optional(),
    progress: z.strictObject({
      n: z.number().int().min(0), mean: z.number().min(0).max(100),
      ci95: z.tuple([z.number().min(0).max(100), z.number().min(0).max(100)]).nullable().describe("two-sided 95% Student t interval of the mean (docs/statistics.md); null below 2 scores"),
    }).nullable().describe("the people's 0-100 progress scores, beside the success rate"),
    label_s_total: z.number().min(0).describe("seconds cells waited for a person's label (labelled and unlabelled episodes)"),
    label_s_per_episode: z.number().min(0).describe("label_s_total over the episodes counted in n"),
    unlabelled: z.array(z.strictObject({
      episode_id: z.string(), index: z.number().int().min(0), cell: z.string().nullable(), waited_s: z.number().min(0).nullable(), finished_at: Timestamp.nullable(),
    })).describe("episodes no person labelled before the cell's label timeout: not failures, never counted in n, not run again"),
  }).optional().describe("tasks judged by a person (operator.success): docs/operators.md"),
  cells: CellBreakdown,
  headline: CompareHeadline.optional().describe("kinds compare and transfer: the comparison's answer up front"),
  assisted: RateSummary.optional().describe("runs that allow interventions: the rate counting successes a human helped (n, success_rate and ci95 count them as failures)"),
  population: z.strictObject({ units: z.array(z.string()), description: z.string() }).optional()
    .describe("kinds other than run: the units (and which of their episodes) the top-level n, success_rate and ci95 describe"),
  ci_requested: z.strictObject({
    ci: z.number().gt(0).lt(1),
    interval: z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]),
    interval_method: z.string(),
  }).optional().describe("the headline's interval (interval_method) at the confidence the run was sized at with auto(ci, moe), when that is not 95%"),
}).describe("The spec's Result. Kinds other than run add their own sections (e.g. units: each unit's pins and Result; a compare's paired test); those are additional properties."));

/** A multi-unit run's unit as the Run shows it. */
export const RunUnit = z.strictObject({
  index: z.number().int().min(0),
  key: z.string(),
  robot: z.string(),
  environment: z.string(),
  task: z.string(),
  policy_name: z.string().optional(),
  role: z.string().optional(),
});

/** The spec's Run (coordinator/lifecycle/run-view.ts). */
export const Run = component("Run", z.looseObject({
  id: z.string(),
  object: z.literal("run"),
  kind: z.enum(RUN_KIND_VALUES),
  status: RunStatus,
  name: z.string().nullable().describe("*added*: the run's name as it is now; null when it has none"),
  metadata: z.record(z.string(), z.string()).describe("*added*: the run's metadata as it is now ({} when none)"),
  created: Timestamp,
  completed: Timestamp.optional().describe("present once completed"),
  robot: z.string().optional().describe("as submitted (kinds with robots/iterate_on/source omit it)"),
  environment: z.string().optional(),
  task: z.string().optional(),
  policy: Policy.optional().describe("as submitted (compare: policies)"),
  policy_name: z.string().optional().describe("kinds with one policy: the name it is shown under: policy_name as submitted, else its image, hf, or \"endpoint policy\" (compare: each unit's policy_name)"),
  episodes: EpisodesSpec.optional(),
  priority: Priority,
  perturbation: Perturbation.nullable(),
  data: DataPosture,
  max_budget_usd: z.number().nullable(),
  interventions: Interventions,
  publish: Publish,
  instructions: InstructionSet,
  resolved_pins: ResolvedPins,
  units: z.array(RunUnit).optional().describe("kinds other than run: the run's units; an episode's unit is the index"),
  result: Result.optional().describe("present once completed (and the partial result of a stopped run)"),
  status_detail: z.strictObject({
    code: z.string().nullable(),
    message: z.string().nullable(),
    waiting_for: z.enum(["instrument", "recordings"]).optional()
      .describe("open runs only: what the run waits for; instrument: its pending episodes need an instrument no matching connected cell has now; recordings: every episode finished and recordings its cells have not uploaded hold it (POST /v1/runs/{run_id}/complete-without-recordings ends the wait)"),
  }).optional()
    .describe("failed or stopped: the error code and message that ended the run; queued, scheduling or running: code null, why the run waits (the message names the instrument and cells, or the cells holding recordings and until when) and waiting_for"),
}).describe("The spec's Run. Kinds other than run also show their own request fields as submitted (robots, environments, policies, suite, scenarios, target, ...) as additional properties."));

/** The spec's Episode. */
export const Episode = component("Episode", z.strictObject({
  id: z.string(),
  object: z.literal("episode"),
  index: z.number().int().min(0),
  outcome: z.enum(["success", "failure"]),
  duration_s: z.number().min(0).nullable(),
  video_url: z.url().nullable().describe("null until the agent announced the file"),
  videos: z.record(z.string(), z.url()).describe("every camera's episode video by camera name (one frame per captured frame, at the camera's rate), as the agent announced them; video_url is the primary camera's (top, else the cell's first)"),
  mcap_url: z.url().nullable(),
  thumbnail_url: z.url().nullable().optional().describe("GET: a JPEG still of the episode (Episode media); null until its recording is stored"),
  series_url: z.url().nullable().optional().describe("GET: the episode's joint time series (Episode media); null until its recording is stored"),
  replay_spec: z.looseObject({}).nullable().describe("initial conditions: environment, layout_seed, lighting, distractors, ..."),
  failure_cluster: z.string().nullable().describe("a failure's cluster (docs/failures.md), else null"),
  last_stage: z.string().nullable().describe("the last stage of the task the episode reached; null when none (or no stages recorded)"),
  cell: z.string().nullable(),
  attempts: z.number().int().min(0),
  interruptions: z.array(z.unknown()),
  judged_by: z.enum(["human", "judge"]).optional().describe("only on episodes whose outcome a person labelled (operator.success), or the run's judge endpoint decided alone (judge)"),
  judge: z.strictObject({
    success: z.boolean().nullable(), confidence: z.number().min(0).max(1).nullable(), error: z.string().nullable().describe("why the judge gave no verdict"),
    audit: z.boolean().describe("in the audit sample: a person judged it too"), low_confidence: z.boolean().describe("below the run's confidence_threshold: a person judged it too"),
  }).optional().describe("runs with a judge: the judge's verdict on this episode (the person's label decided it wherever both exist)"),
  label: z.strictObject({
    progress: z.number().min(0).max(100).nullable(), note: z.string().nullable(), waited_s: z.number().min(0).nullable().describe("seconds the cell waited for the label"),
  }).optional().describe("the person's label: progress 0-100, note, labelling time"),
  intervened: z.literal(true).optional().describe("only on intervened episodes"),
  interventions: z.array(z.looseObject({})).optional(),
  unit: z.number().int().min(0).optional().describe("multi-unit kinds: the unit index"),
  pair: z.number().int().min(0).optional().describe("kind compare: the pair index; both episodes of a pair share the seed, so the same initial conditions"),
}));

/** One artifact file, as GET /v1/runs/{run_id}/episodes?artifact=<kind> lists it. */
export const Artifact = component("Artifact", z.strictObject({
  object: z.literal("artifact"),
  episode_id: z.string(),
  index: z.number().int().min(0),
  kind: z.string(),
  url: z.url().nullable().describe("null until stored"),
  bytes: z.number().int().min(0),
  sha256: z.string(),
  status: z.string(),
  missing_since: z.string().optional().describe("(added) only on a pending file whose run completed without it (its cell had not uploaded it within the coordinator's wait for recordings): when; it is still taken if the cell uploads it"),
}));

/** The episodes list: Episodes, or with `artifact=<kind>` the run's artifact files of that kind. */
export const EpisodeOrArtifactList = z.strictObject({
  object: z.literal("list"),
  url: z.string(),
  data: z.union([z.array(Episode), z.array(Artifact)]),
}).describe("Episodes; with artifact=<kind>, Artifacts");

/** One instruction set's rates in a Report. */
const InstructionSetRates = z.strictObject({ ...RateSummary.shape, by_instruction: z.record(z.string(), RateSummary) });

/** One activity of a person in a Report's operator_time: how many, seconds in all, mean each, per counted episode. */
const OperatorActivity = z.strictObject({ count: z.number().int().min(0), s_total: NonNegative, s_mean: NonNegative, s_per_episode: NonNegative });

/** The spec's Report (coordinator/reports/report.ts). */
export const Report = component("Report", z.strictObject({
  object: z.literal("report"),
  run_id: z.string(),
  kind: z.literal("verification"),
  run_kind: z.enum(RUN_KIND_VALUES),
  result: RateSummary,
  resolved_pins: ResolvedPins,
  citation: z.string(),
  pdf_url: z.url(),
  generated: Timestamp,
  failure_clusters: z.record(z.string(), z.number().int().min(0)),
  perturbation_schedule: z.strictObject({
    perturbation_rev: z.string(),
    requested: z.unknown(),
    summary: z.strictObject({ lighting: z.record(z.string(), z.number()), distractors: z.record(z.string(), z.number()) }),
    realized: z.array(z.looseObject({ index: z.number().int() })),
  }).describe("the schedule as requested and as realized, one entry per finished episode"),
  stages: z.record(z.string(), RateSummary),
  instructions: z.strictObject({ mode: InstructionSet, sampled: InstructionSetRates, held_out: InstructionSetRates }),
  out_of_scope: z.array(z.string()).describe("the task envelope's declarations, verbatim"),
  units: z.array(z.strictObject({
    key: z.string(), robot: z.string(), environment: z.string(), task: z.string(),
    policy_name: z.string().optional(), role: z.string().optional(), result: RateSummary, citation: z.string(),
  })),
  interventions: z.strictObject({
    mode: z.string(), episodes_intervened: z.number().int().min(0), count: z.number().int().min(0), assisted_successes: z.number().int().min(0),
    events: z.array(z.strictObject({
      episode: z.string(), index: z.number().int(), unit: z.number().int().optional(), t_s: z.number().nullable(), kind: z.string(),
      by: z.string().optional().describe("\"operator\": a person at the operator station helped (absent: the simulator's own nudge)"),
    })).describe("the Result's interventions.timestamps"),
    unassisted: RateSummary.describe("the headline: an intervened episode counts as a failure of the policy"),
    assisted: RateSummary.describe("the same episodes, successes a human helped counted as successes"),
  }),
  cells: CellBreakdown,
  operator_time: z.strictObject({
    episodes: z.number().int().min(0).describe("episodes counted in n: the denominator of the per-episode figures"),
    reset: OperatorActivity.describe("resets that waited for a person (finished, interrupted and invalidated attempts), from awaiting_reset to the answer"),
    label: OperatorActivity.describe("episodes a person was asked to judge (labelled or unlabelled), from awaiting_label to the label or the timeout"),
    intervention: OperatorActivity.describe("interventions a person performed at the operator station (by: \"operator\" in a finished episode's interventions), from the offer to Done: waited_s (the offer to Intervene, the walk to the cell) plus started_at to ended_at (Intervene to Done), wall clock; an offer nobody took and the simulator's own nudges count nothing"),
    s_total: NonNegative.describe("seconds of a person's time: resets, labels and interventions together"),
    s_per_episode: NonNegative.describe("s_total over the episodes counted in n"),
  }).optional().describe("a person's time on the run's resets, labels and interventions (issue 26); absent when no person was involved"),
  comparison: CompareHeadline.optional().describe("kinds compare and transfer: the Result's headline, the comparison's answer up front"),
  cost: z.strictObject({ robot_hours: NonNegative, environment_hours: NonNegative, cost_usd: NonNegative }),
}));

/** Data of the SSE `status` event. */
export const StatusEvent = z.strictObject({
  status: RunStatus,
  cell: z.string().nullable(),
  webrtc: z.string().nullable().describe("wss:// URL of the cell's live stream under the streams base"),
});

/** Data of the SSE `episode` event. */
export const EpisodeEvent = z.strictObject({
  episode: z.number().int().min(1), of: z.number().int().min(0), outcome: z.string(), duration_s: z.number(),
});

/** POST /v1/runs/{run_id}/checkpoints body. */
export const CheckpointRequest = z.strictObject({ policy: Policy }, { error: `request body must be {"policy": Policy}` }).describe("a new checkpoint for an iterating threshold run");

/** POST /v1/runs/{run_id}/checkpoints response. */
export const Checkpoint = component("Checkpoint", z.strictObject({
  object: z.literal("checkpoint"),
  run_id: z.string(),
  index: z.number().int().min(0),
  from_episode: z.number().int().min(0),
  policy: Policy,
}));

/** POST /v1/runs/{run_id}/episodes/{episode_id}/replay body (coordinator/replay/replay-run.ts). */
export const ReplayRequest = z.strictObject({
  policy: Policy.optional().describe("default: the original run's policy"),
  count: z.number({ error: `must be an integer 1..${REPLAY_COUNT_MAX}` }).int({ error: `must be an integer 1..${REPLAY_COUNT_MAX}` })
    .min(1, { error: `must be an integer 1..${REPLAY_COUNT_MAX}` }).max(REPLAY_COUNT_MAX, { error: `must be an integer 1..${REPLAY_COUNT_MAX}` })
    .optional().describe("copies of the episode; default 1"),
});

/** The spec's Purge receipt. */
export const PurgeReceipt = component("PurgeReceipt", z.strictObject({
  object: z.literal("purge_receipt"),
  id: z.string(),
  run_id: z.string(),
  status: z.literal("completed"),
  purged_at: Timestamp,
}));

/** Query of GET /v1/runs (unknown parameters are ignored); every filter given must match. */
export const RunListQuery = z.object({
  kind: queryEnum("kind", RUN_KIND_VALUES),
  status: queryEnum("status", RUN_STATUS_VALUES),
  task: queryText("task", "a task name (any revision) or a revision <name>@v<N>"),
  robot: queryText("robot", "a robot model (any firmware), e.g. so101, or a pin <model>@<firmware>"),
  policy_name: queryText("policy_name", "the name a policy is shown under: policy_name as submitted (a compare's policy names), else the container image or the checkpoint's hf"),
  metadata: z.record(z.string().max(METADATA_KEY_MAX_CHARS), z.string().max(METADATA_VALUE_MAX_CHARS)).optional()
    .meta({ maxProperties: METADATA_KEYS_MAX, "x-assay-query-style": "deepObject" })
    .describe("metadata[<key>]=<value>, repeatable with other keys: runs whose metadata has each key with exactly that value"),
  limit: queryInteger("limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT),
  starting_after: queryText("starting_after", "a run id: list the runs created before it"),
});

/** Query of GET /v1/runs/{run_id}/episodes. */
export const EpisodeListQuery = z.object({
  outcome: queryEnum("outcome", ["success", "failure"]),
  cluster: queryText("cluster", "a failure cluster name (docs/failures.md); a legacy name finds the same episodes as its current one"),
  stage: queryText("stage", "the last stage reached (Episode.last_stage); `none` for episodes that reached no stage"),
  artifact: z.string({ error: "query parameter artifact must be given once as a plain value" })
    .max(70, { error: "query parameter artifact is at most 70 characters (video: and a camera name of at most 64)" })
    .regex(/^(mcap|video|ground_truth|video:[A-Za-z0-9_-]{1,64})$/, { error: "query parameter artifact must be one of mcap, video, ground_truth or video:<camera> (a camera's video, e.g. video:wrist)" })
    .optional().describe("list the run's artifact files of this kind instead of episodes: mcap, video (the primary camera's), video:<camera> (another camera's) or ground_truth"),
});

/** Query of GET /v1/runs/{run_id}/episodes/{episode_id}/series. */
export const EpisodeSeriesQuery = z.object({
  max_points: queryInteger("max_points", 10, MAX_SERIES_POINTS, DEFAULT_SERIES_POINTS),
});

/** An episode's joint time series from its MCAP, downsampled (coordinator/artifacts/episode-series.ts). */
export const EpisodeSeries = component("EpisodeSeries", z.strictObject({
  object: z.literal("episode_series"),
  episode_id: z.string(),
  index: z.number().int().min(0),
  joint_names: z.array(z.string()),
  steps: z.number().int().min(0).describe("control steps recorded"),
  points: z.number().int().min(0).describe("points in each series below (at most max_points)"),
  t_s: z.array(z.number()).describe("seconds since the first step, one per point"),
  measured: z.array(z.array(z.number().nullable())).describe("per joint: /joint_states_measured positions, rad (gripper 0-1)"),
  commanded: z.array(z.array(z.number().nullable())).describe("per joint: /joint_targets_commanded, the action sent after the safety envelope; null where the step commanded nothing (the arm held)"),
  events: z.array(z.strictObject({ t_s: z.number(), name: z.string() })).describe("the episode's /events (at most 200)"),
}));

/** Query of GET /v1/runs/{run_id}/episodes/{episode_id}/thumbnail. */
export const ThumbnailQuery = z.object({
  camera: queryText("camera", "the camera (default: top, else the first recorded)"),
  at: queryEnum("at", ["first", "last"], "the camera's first or last frame (default last: how the episode ended)"),
});

/** Query of GET /v1/runs/{run_id}/report. */
export const ReportQuery = z.object({
  format: queryEnum("format", ["json", "pdf"], "json (default) or pdf"),
});

/**
 * `assay models upload|list|get|delete`: the account's policy models (docs/api.md, "Models"). An
 * upload is resumable (model-upload.ts) and shows a byte bar; list, get and delete are GET /v1/models,
 * GET and DELETE /v1/models/{id}.
 */
import { InvalidArgumentError, type Command } from "commander";
import type { CliRuntime, CommandContext } from "../command-context.js";
import { byteSize, fields, localTime, table } from "../human-format.js";
import { uploadModel, type Model, type Tensor } from "../model-upload.js";
import { progressPlace, progressView } from "../progress-view.js";

const MIB = 1024 * 1024;
/** The server takes at most 64 MiB a chunk (models.maxChunkBytes); 8 MiB keeps a lost chunk cheap. */
const DEFAULT_CHUNK_BYTES = 8 * MIB;
const MAX_CHUNK_BYTES = 64 * MIB;
const UNITS: Record<string, number> = { "": 1, b: 1, k: 1000, kb: 1000, kib: 1024, m: 1000 ** 2, mb: 1000 ** 2, mib: MIB };

/** `--chunk-size 8MiB` (or 512KiB, 1000000), 1 byte..64 MiB. */
export function chunkSize(value: string): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(value.trim());
  const unit = match ? UNITS[match[2].toLowerCase()] : undefined;
  const bytes = match && unit !== undefined ? Number(match[1]) * unit : NaN;
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_CHUNK_BYTES) throw new InvalidArgumentError("it must be a size from 1 byte to 64MiB, e.g. 8MiB, 512KiB or 1000000.");
  return bytes;
}

function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("it must be a positive integer.");
  return Number(value);
}

const shape = (t: Tensor) => `${t.name} ${t.type}${t.shape ? `[${t.shape.map((d) => (d === null ? "?" : String(d))).join(", ")}]` : " (no shape)"}`;

function modelBlock(m: Model): string {
  const progress = m.status === "uploading" ? `${byteSize(m.received_bytes)} of ${byteSize(m.bytes)} received (assay models upload resumes it)` : undefined;
  return fields([
    ["model", `${m.id} (${m.ref})`],
    ["status", m.status],
    ["upload", progress],
    ["size", byteSize(m.bytes)],
    ["sha256", m.sha256],
    ["source", m.source],
    ["created", localTime(m.created)],
    ["ready", m.ready_at ? localTime(m.ready_at) : undefined],
    ["expires", m.expires_at ? `${localTime(m.expires_at)} (retention ${m.retention})` : undefined],
    ["ended", m.ended_at ? localTime(m.ended_at) : undefined],
    ["failure", m.failure?.message],
    ["inputs", m.io ? m.io.inputs.map(shape).join("; ") || "none" : undefined],
    ["outputs", m.io ? m.io.outputs.map(shape).join("; ") || "none" : undefined],
    ["opset", m.io?.opset != null ? `${m.io.opset}${m.io.producer ? ` (${m.io.producer})` : ""}` : undefined],
  ]);
}

interface UploadOptions {
  name: string;
  revision?: string;
  retention?: string;
  chunkSize: number;
}

async function upload(ctx: CommandContext, file: string, options: UploadOptions) {
  const place = progressPlace(ctx.json);
  const bar = progressView(place, {
    barFormat: "uploading {bar} {percentage}% {doneBytes}/{totalBytes}",
    lineOf: (value, total, t) => `uploading: ${Math.floor((value / total) * 10) * 10}% of ${t.totalBytes}`,
  });
  let uploaded;
  try {
    uploaded = await uploadModel(ctx.api(), { file, name: options.name, revision: options.revision, retention: options.retention, chunkBytes: options.chunkSize }, {
      started: (model, resumed) =>
        ctx.out.human(resumed
          ? `resuming the upload of ${model.id} (${model.ref}) at ${byteSize(model.received_bytes)} of ${byteSize(model.bytes)}`
          : `uploading ${file} as ${model.id} (${model.ref}), ${byteSize(model.bytes)}, sha256 ${model.sha256}`),
      progress: (done, total) => bar.update(done, total, { doneBytes: byteSize(done), totalBytes: byteSize(total) }),
    });
  } finally {
    bar.stop();
  }
  if (ctx.json) return ctx.out.apiJson(uploaded.text);
  const m = uploaded.model;
  ctx.out.human(`${m.id} ready: ${m.ref}, ${byteSize(m.bytes)}, sha256 ${m.sha256} verified by the server`);
  ctx.out.human(`use it in a run: "policy": {"type": "checkpoint", "hf": "${m.ref}", ...}`);
}

async function list(ctx: CommandContext, options: { name?: string; limit?: number; startingAfter?: string }) {
  const answer = await ctx.api().json<{ data: Model[]; has_more: boolean }>("GET", "/v1/models", {
    query: { name: options.name, limit: options.limit, starting_after: options.startingAfter },
  });
  if (ctx.json) return ctx.out.apiJson(answer.text);
  const models = answer.data.data;
  if (models.length === 0) return ctx.out.human("no models");
  ctx.out.human(
    table(
      [{ header: "MODEL" }, { header: "REF" }, { header: "STATUS" }, { header: "SIZE", align: "right" }, { header: "CREATED" }, { header: "EXPIRES" }],
      models.map((m) => [
        m.id, m.ref,
        m.status === "uploading" ? `uploading ${Math.floor((m.received_bytes / m.bytes) * 100)}%` : m.status,
        byteSize(m.bytes), localTime(m.created), localTime(m.expires_at),
      ]),
    ),
  );
  if (answer.data.has_more) ctx.out.human(`more: assay models list --starting-after ${models[models.length - 1].id}`);
}

export function registerModels(program: Command, runtime: CliRuntime): void {
  const models = program.command("models").description("upload (resumable), list, show and delete the ONNX models checkpoint policies run");

  models
    .command("upload")
    .description("upload an ONNX model (POST /v1/models, then PUT chunks); run it again after an interruption to resume")
    .argument("<file>", "the .onnx file")
    .requiredOption("--name <org/name>", "the name policies reference it by (policy.hf), e.g. acme/pick-cube")
    .option("--revision <revision>", "the revision (default main); policy.hf names it org/name@revision")
    .option("--retention <n>h|<n>d>", "how long it is kept once ready, 1h..365d (default 90d)")
    .option("--chunk-size <size>", "bytes per PUT, up to 64MiB (default 8MiB); a broken chunk is all that is sent again", chunkSize, DEFAULT_CHUNK_BYTES)
    .addHelpText("after", "\nExample:\n  assay models upload policy.onnx --name acme/pick-cube --revision v2\n  (interrupted? the same command again resumes where the server stands)")
    .action(runtime.action<[string, UploadOptions]>(upload));

  models
    .command("list")
    .description("the account's models, newest first (GET /v1/models)")
    .option("--name <org/name>", "only models of this name")
    .option("--limit <n>", "at most n models, 1..100 (default 20)", positiveInteger)
    .option("--starting-after <model_id>", "the page after this model")
    .action(runtime.action<[{ name?: string; limit?: number; startingAfter?: string }]>(list));

  models
    .command("get")
    .description("one model: status, upload progress, sha256, declared inputs and outputs (GET /v1/models/{id})")
    .argument("<model_id>")
    .action(
      runtime.action<[string]>(async (ctx, id) => {
        const answer = await ctx.api().json<Model>("GET", `/v1/models/${encodeURIComponent(id)}`);
        if (ctx.json) return ctx.out.apiJson(answer.text);
        ctx.out.human(modelBlock(answer.data));
      }),
    );

  models
    .command("delete")
    .description("delete a model's bytes (DELETE /v1/models/{id}); refused while an unfinished run uses it")
    .argument("<model_id>")
    .action(
      runtime.action<[string]>(async (ctx, id) => {
        const answer = await ctx.api().json<Model>("DELETE", `/v1/models/${encodeURIComponent(id)}`);
        if (ctx.json) return ctx.out.apiJson(answer.text);
        ctx.out.human(`${answer.data.id} (${answer.data.ref}) ${answer.data.status}`);
      }),
    );
}

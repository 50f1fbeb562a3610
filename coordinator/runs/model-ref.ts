/**
 * What `policy.hf` may name: a model the account uploaded or the operator's mirror holds, as
 * Hugging Face names them (`org/name`, optionally `@revision`, default `main`), or an uploaded
 * model's id (`mdl_...`). Cells cannot reach a model hub, so nothing is fetched from one.
 */
import { contract, q } from "./field-checks.js";

export const DEFAULT_REVISION = "main";
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$/;
const REVISION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MODEL_ID = /^mdl_[A-Za-z0-9]{20}$/;

/** A model pinned for a run (`resolved_pins.models`): what the cells load, checked by hash. */
export interface PinnedModel {
  id: string;
  sha256: string;
  bytes: number;
  source: "upload" | "mirror";
}

export type ModelRef = { kind: "id"; id: string } | { kind: "name"; name: string; revision: string };

/** Whether `name` is a model name a Hugging Face repository could have (`org/name` or `name`). */
export function isModelName(name: string): boolean {
  return NAME.test(name) && !name.includes("..");
}

export function isRevision(revision: string): boolean {
  return REVISION.test(revision);
}

/** Parses `policy.hf`; a 422 naming `field` says what a reference looks like. */
export function parseModelRef(value: string, field = "policy.hf"): ModelRef {
  if (MODEL_ID.test(value)) return { kind: "id", id: value };
  const at = value.lastIndexOf("@");
  const name = at > 0 ? value.slice(0, at) : value;
  const revision = at > 0 ? value.slice(at + 1) : DEFAULT_REVISION;
  if (!isModelName(name) || !isRevision(revision)) {
    contract(`${field} must name a model as org/name or org/name@revision (letters, digits, . _ -), or an uploaded model's id mdl_...; got ${q(value)}`);
  }
  return { kind: "name", name, revision };
}

export function refText(name: string, revision: string): string {
  return revision === DEFAULT_REVISION ? name : `${name}@${revision}`;
}

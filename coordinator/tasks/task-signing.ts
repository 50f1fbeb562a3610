/**
 * Signatures over a frozen Task Spec. Both parties sign the same bytes: the UTF-8 canonical JSON
 * (object keys sorted recursively by code unit, no whitespace) of the spec's signed fields, with an
 * absent field written as null. `baseline` is not signed: it is private to the owning account and
 * never published. A signature is the string `ed25519:<key_id>:<base64url signature>`; the key's
 * public half is at GET /v1/signing-keys/<key_id>. docs/api.md has a verification recipe.
 */
import { createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { canonicalJson } from "../json/canonical-json.js";
import type { SigningKey } from "./signing-keys.js";

/** The Task Spec fields a signature covers, in the order docs/api.md lists them. */
export const SIGNED_FIELDS = [
  "name", "rev", "visibility", "environment_class", "frozen",
  "initial_conditions", "success_predicates", "instructions", "stages", "envelope",
] as const;

const SIGNATURE_PATTERN = /^ed25519:([A-Za-z0-9_]+):([A-Za-z0-9_-]+)$/;

/** The exact bytes both parties sign for a spec (a Task Spec as the API shows it, or its fields). */
export function signedPayload(spec: Record<string, unknown>): Buffer {
  const signed: Record<string, unknown> = {};
  for (const field of SIGNED_FIELDS) signed[field] = spec[field] ?? null;
  return Buffer.from(canonicalJson(signed), "utf8");
}

/** `ed25519:<key_id>:<base64url>` over `signedPayload(spec)`. */
export function signTaskSpec(spec: Record<string, unknown>, key: SigningKey): string {
  return `ed25519:${key.id}:${sign(null, signedPayload(spec), key.privateKey).toString("base64url")}`;
}

export interface ParsedSignature {
  keyId: string;
  signature: Buffer;
}

/** Splits a signature string; undefined when it is not `ed25519:<key_id>:<base64url>`. */
export function parseSignature(text: string): ParsedSignature | undefined {
  const match = SIGNATURE_PATTERN.exec(text);
  return match ? { keyId: match[1]!, signature: Buffer.from(match[2]!, "base64url") } : undefined;
}

/** Whether `signature` is a valid signature of `spec` by `publicKey` (a KeyObject or SPKI PEM). */
export function verifyTaskSignature(spec: Record<string, unknown>, signature: string, publicKey: KeyObject | string): boolean {
  const parsed = parseSignature(signature);
  if (!parsed) return false;
  const key = typeof publicKey === "string" ? createPublicKey(publicKey) : publicKey;
  try {
    return verify(null, signedPayload(spec), key, parsed.signature);
  } catch {
    return false;
  }
}

/** API keys (POST/GET /v1/keys, DELETE /v1/keys/{key_id}) and task-signing keys (GET /v1/signing-keys). */
import { z } from "zod";
import { SCOPES } from "../../auth/scopes.js";
import { component, NullableTimestamp, Timestamp } from "./common.js";

/** A key scope (spec section 5). */
export const Scope = component("Scope", z.enum(SCOPES, { error: `must be one of ${SCOPES.join(", ")}` }));

/** POST /v1/keys body. */
export const CreateKeyRequest = component("CreateKeyRequest", z.strictObject({
  scope: z.array(Scope, { error: `scope is required: a non-empty array of ${SCOPES.join(", ")}` })
    .min(1, { error: `scope is required: a non-empty array of ${SCOPES.join(", ")}` })
    .max(SCOPES.length, { error: `scope must list each of ${SCOPES.join(", ")} at most once` }),
}, { error: `request body must be a JSON object {"scope": [...]}` }));

/** The spec's API key. `secret` only in the creation response; `hint` identifies the key without it. */
export const ApiKey = component("ApiKey", z.strictObject({
  object: z.literal("key"),
  id: z.string(),
  scope: z.array(Scope),
  hint: z.string().describe("the secret's prefix and first characters, e.g. asy_live_Ab12…"),
  created: Timestamp,
  revoked: NullableTimestamp,
  secret: z.string().optional().describe("only in the creation response; shown once"),
}));

/** GET /v1/keys/current: the calling key, its account, and whether it is an operator's. */
export const CurrentKey = component("CurrentKey", ApiKey.omit({ secret: true }).extend({
  account: z.strictObject({ id: z.string(), name: z.string() }),
  operator: z.boolean().describe("the key belongs to the operator account: fleet and kit operations, every cell's live view"),
}).describe("The key making the request: what it may do, without trying."));

/** The public half of a key that signs frozen task specs. */
export const SigningKey = component("SigningKey", z.strictObject({
  object: z.literal("signing_key"),
  id: z.string(),
  owner: z.string().describe("an account id, or the service"),
  algorithm: z.literal("ed25519"),
  public_key_pem: z.string(),
  created: Timestamp,
}));

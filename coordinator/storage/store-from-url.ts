/**
 * Chooses the artifact store from ASSAY_ARTIFACTS_URL: unset or empty keeps files on disk under
 * `<dataDir>/artifacts` (as before object storage); `s3://bucket/prefix` puts them in a bucket.
 * The caller reads the environment once and passes it in (`env`), so nothing here reads
 * process.env.
 */
import { join } from "node:path";
import { DiskStore } from "./disk-store.js";
import { ObjectStoreError, type ObjectStore } from "./object-store.js";
import { S3Store, type S3StoreOptions } from "./s3-store.js";

export interface StoreFromUrlOptions {
  /** The coordinator's data folder: the disk store's root is `<dataDir>/artifacts`, S3 upload spools go to `<dataDir>/artifacts-spool`. */
  dataDir: string;
  /** The AWS variables, read once by the caller: AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3), AWS_REGION (or AWS_DEFAULT_REGION), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN. Default none (the SDK's own chain). */
  env?: Record<string, string | undefined>;
  /** Endpoint, region and credentials already read from those variables (s3ConnectionFromEnv); used instead of `env`. */
  connection?: S3Connection;
}

/** What the AWS variables say about reaching a bucket; what is unset is left to the SDK. */
export type S3Connection = Pick<S3StoreOptions, "endpoint" | "region" | "credentials">;

/** What an `s3://` URL says, before any client is made. */
export type ParsedStoreUrl = { kind: "disk" } | { kind: "s3"; bucket: string; prefix: string };

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses ASSAY_ARTIFACTS_URL; throws `invalid_config` with what was wrong and the value. */
export function parseStoreUrl(url: string | undefined): ParsedStoreUrl {
  if (url === undefined || url.trim() === "") return { kind: "disk" };
  const fail = (why: string): never => {
    throw new ObjectStoreError("invalid_config", `ASSAY_ARTIFACTS_URL ${why}; got ${JSON.stringify(url)}`);
  };
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(url)?.[1];
  if (!scheme) fail("must look like s3://bucket/prefix, or be unset to keep artifacts on disk");
  if (scheme!.toLowerCase() !== "s3") fail(`has an unknown scheme "${scheme}:"; the only one supported is s3://bucket/prefix`);
  const rest = url.slice(scheme!.length + 3);
  if (/[?#]/.test(rest)) fail("must not have a query or fragment; set the endpoint and region with AWS_ENDPOINT_URL and AWS_REGION");
  const slash = rest.indexOf("/");
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  if (bucket === "") fail("is missing the bucket name (s3://bucket/prefix)");
  if (!BUCKET.test(bucket) || bucket.includes("..")) fail(`has an invalid bucket name "${bucket}" (3-63 lowercase letters, digits, dots and hyphens)`);
  const prefix = slash === -1 ? "" : rest.slice(slash + 1).replace(/\/+$/, "");
  if (prefix !== "" && prefix.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    fail(`has an invalid prefix "${prefix}" (no empty, . or .. segments)`);
  }
  return { kind: "s3", bucket, prefix: prefix === "" ? "" : `${prefix}/` };
}

/** The store ASSAY_ARTIFACTS_URL names; see parseStoreUrl for the messages. */
export function objectStoreFromUrl(url: string | undefined, options: StoreFromUrlOptions): ObjectStore {
  const parsed = parseStoreUrl(url);
  if (parsed.kind === "disk") return new DiskStore(join(options.dataDir, "artifacts"));
  const connection = options.connection ?? s3ConnectionFromEnv(options.env ?? {});
  return new S3Store({ ...connection, bucket: parsed.bucket, prefix: parsed.prefix, spoolDir: join(options.dataDir, "artifacts-spool") });
}

/** Endpoint, region and credentials from the standard AWS variables; what is unset is left to the SDK. */
export function s3ConnectionFromEnv(env: Record<string, string | undefined>): S3Connection {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint)) {
    throw new ObjectStoreError("invalid_config", `AWS_ENDPOINT_URL must be an http:// or https:// URL of an S3-compatible server; got ${JSON.stringify(endpoint)}`);
  }
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined;
  const accessKeyId = env.AWS_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ObjectStoreError("invalid_config", `set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither (to use the SDK's profile or instance role); only ${accessKeyId ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY"} is set`);
  }
  return {
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } } : {}),
  };
}

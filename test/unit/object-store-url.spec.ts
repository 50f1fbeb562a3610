import { strict as assert } from "node:assert";
import { compileCoordinatorOptions, objectStoreOf } from "../../coordinator/options.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { ObjectStoreError } from "../../coordinator/storage/object-store.js";
import { S3Store } from "../../coordinator/storage/s3-store.js";
import { objectStoreFromUrl, parseStoreUrl, s3ConnectionFromEnv } from "../../coordinator/storage/store-from-url.js";

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ObjectStoreError && error.reason === "invalid_config", String(error));
    return error.message;
  }
  assert.fail("expected an invalid_config error");
}

describe("ASSAY_ARTIFACTS_URL", () => {
  it("unset or empty keeps artifacts on disk under <dataDir>/artifacts", () => {
    assert.deepEqual(parseStoreUrl(undefined), { kind: "disk" });
    assert.deepEqual(parseStoreUrl(""), { kind: "disk" });
    const store = objectStoreFromUrl(undefined, { dataDir: "/var/lib/assay" });
    assert.ok(store instanceof DiskStore);
    assert.equal(store.root, "/var/lib/assay/artifacts");
  });

  it("s3://bucket/prefix names the bucket and a prefix ending in /", () => {
    assert.deepEqual(parseStoreUrl("s3://assay-artifacts/prod/eu"), { kind: "s3", bucket: "assay-artifacts", prefix: "prod/eu/" });
    assert.deepEqual(parseStoreUrl("s3://assay-artifacts/prod/"), { kind: "s3", bucket: "assay-artifacts", prefix: "prod/" });
    assert.deepEqual(parseStoreUrl("s3://assay-artifacts"), { kind: "s3", bucket: "assay-artifacts", prefix: "" });
    const store = objectStoreFromUrl("s3://assay-artifacts/prod", { dataDir: "/data", env: { AWS_ENDPOINT_URL: "http://127.0.0.1:9000", AWS_REGION: "eu-west-1" } });
    assert.ok(store instanceof S3Store);
    assert.deepEqual([store.bucket, store.prefix], ["assay-artifacts", "prod/"]);
  });

  it("says what is wrong, with the value", () => {
    assert.equal(configError(() => parseStoreUrl("s3:///prefix")), 'ASSAY_ARTIFACTS_URL is missing the bucket name (s3://bucket/prefix); got "s3:///prefix"');
    assert.match(configError(() => parseStoreUrl("gs://bucket/x")), /unknown scheme "gs:".*s3:\/\/bucket\/prefix; got "gs:\/\/bucket\/x"/);
    assert.match(configError(() => parseStoreUrl("/mnt/artifacts")), /must look like s3:\/\/bucket\/prefix, or be unset/);
    assert.match(configError(() => parseStoreUrl("s3://My_Bucket/x")), /invalid bucket name "My_Bucket"/);
    assert.match(configError(() => parseStoreUrl("s3://bucket/a/../b")), /invalid prefix "a\/..\/b"/);
    assert.match(configError(() => parseStoreUrl("s3://bucket/x?region=eu-west-1")), /AWS_ENDPOINT_URL and AWS_REGION/);
  });

  it("takes endpoint, region and credentials from the standard AWS variables", () => {
    assert.deepEqual(s3ConnectionFromEnv({ AWS_ENDPOINT_URL: "http://minio:9000", AWS_DEFAULT_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AK", AWS_SECRET_ACCESS_KEY: "SK" }), {
      endpoint: "http://minio:9000",
      region: "eu-west-1",
      credentials: { accessKeyId: "AK", secretAccessKey: "SK" },
    });
    assert.deepEqual(s3ConnectionFromEnv({}), {});
    assert.match(configError(() => s3ConnectionFromEnv({ AWS_ACCESS_KEY_ID: "AK" })), /set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither/);
    assert.match(configError(() => s3ConnectionFromEnv({ AWS_ENDPOINT_URL: "minio:9000" })), /AWS_ENDPOINT_URL must be an http:\/\/ or https:\/\/ URL.*"minio:9000"/);
  });

  it("is the coordinator's artifactsUrl option: refused when the options are compiled, before anything starts", () => {
    assert.match(configError(() => compileCoordinatorOptions({ artifactsUrl: "gs://bucket/x" })), /^ASSAY_ARTIFACTS_URL has an unknown scheme "gs:"/);
    const onDisk = objectStoreOf(compileCoordinatorOptions({ dataDir: "/var/lib/assay", artifactsUrl: "" }));
    assert.ok(onDisk instanceof DiskStore);
    assert.equal(onDisk.root, "/var/lib/assay/artifacts");
    const inBucket = objectStoreOf(compileCoordinatorOptions({ dataDir: "/data", artifactsUrl: "s3://assay-artifacts/prod", s3: { endpoint: "http://127.0.0.1:9000" } }));
    assert.ok(inBucket instanceof S3Store);
    assert.deepEqual([inBucket.bucket, inBucket.prefix], ["assay-artifacts", "prod/"]);
  });
});

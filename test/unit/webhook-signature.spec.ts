/**
 * The webhook signature: the coordinator's signer against the receiver recipe published in
 * docs/api.md (the code block is extracted from the doc and run as written).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { signatureHeader, verifySignature } from "../../coordinator/webhooks/signature.js";

type Recipe = (rawBody: string, header: string, secret: string, nowS?: number) => boolean;

const docsPath = fileURLToPath(new URL("../../docs/api.md", import.meta.url));

describe("webhook signature", () => {
  let dir: string;
  let recipe: Recipe;
  const secret = "whsec_0123456789abcdefghijABCDEFGHIJ01";
  const body = JSON.stringify({ id: "evt_1", object: "event", type: "run.completed", created: "2026-11-22T00:00:00.000Z", data: { run: { id: "run_1" } } });
  const t = 1_790_000_000;

  before(async () => {
    const doc = readFileSync(docsPath, "utf8");
    const match = /<!-- webhook-verification-recipe[^>]*-->\s*```js\n([\s\S]*?)```/.exec(doc);
    assert.ok(match, "docs/api.md must hold the verification recipe block");
    dir = mkdtempSync(join(tmpdir(), "assay-recipe-"));
    const file = join(dir, "recipe.mjs");
    writeFileSync(file, match[1]);
    recipe = ((await import(pathToFileURL(file).href)) as { verifyAssaySignature: Recipe }).verifyAssaySignature;
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("signs t.<raw body> with HMAC-SHA256 of the endpoint secret, in the documented header form", () => {
    const header = signatureHeader(secret, t, body);
    assert.match(header, /^t=1790000000,v1=[0-9a-f]{64}$/);
  });

  it("the documented recipe accepts a genuine delivery and rejects tampering, wrong secrets and old timestamps", () => {
    const header = signatureHeader(secret, t, body);
    assert.equal(recipe(body, header, secret, t), true);
    assert.equal(recipe(body, header, secret, t + 300), true);
    assert.equal(recipe(body, header, secret, t + 301), false, "older than 5 minutes");
    assert.equal(recipe(body.replace("run_1", "run_2"), header, secret, t), false);
    assert.equal(recipe(body, header, "whsec_other", t), false);
    assert.equal(recipe(body, header.replace(/v1=./, "v1=0"), secret, t), false);
    assert.equal(recipe(body, "", secret, t), false);
    assert.equal(recipe(body, `t=${t}`, secret, t), false);
    // Several v1 entries (e.g. during a secret rotation): any one may match.
    assert.equal(recipe(body, `t=${t},v1=${"0".repeat(64)},${header.split(",")[1]}`, secret, t), true);
  });

  it("the coordinator's verifier agrees with the recipe", () => {
    const header = signatureHeader(secret, t, body);
    for (const [b, h, s, now] of [[body, header, secret, t], [body, header, secret, t + 301], [body + " ", header, secret, t], [body, header, "whsec_x", t]] as const) {
      assert.equal(verifySignature(s, h, b, now), recipe(b, h, s, now));
    }
  });
});

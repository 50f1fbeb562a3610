/**
 * The `assay` command line beyond runs, against a real coordinator without cells, each invocation its
 * own process (bin/assay.mjs): `login` typed at a pseudo-terminal (the key never echoed, the stored
 * file 0600 in a 0700 folder) or piped with --key-stdin, the settings' precedence (flags > environment
 * > stored login, a stored key sent only to its own URL), whoami and logout; keys created (the secret
 * printed once), listed and revoked; a model upload broken mid-way by a proxy and resumed by running
 * the same command again, the stored model's sha256 checked; tasks created from a JSON file and their
 * lifecycle errors in the API's words; leaderboards read without a key; `runs get --web` handing the
 * run's page to $BROWSER.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { README_RUN_BODY } from "../fixtures.js";
import { runCliInPty, runCliPiped, startCliInPty } from "../support/cli-process.js";
import { paddedModel } from "../support/onnx-models.js";
import { startRequestCuttingProxy } from "../support/request-cutting-proxy.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { startTestService, TEST_ADMIN_KEY, waitForRunEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>;

describe("the assay command line: login, keys, models, tasks, leaderboards, --web (no cells)", function () {
  this.timeout(120_000);
  let service: TestService;
  let dir: string;
  /** XDG_CONFIG_HOME of these tests: the stored login lands here, never in the real home. */
  let config: string;
  let base: string;
  /** An environment with no key and no URL: only the stored login (or flags) can supply them. */
  let bare: Record<string, string>;
  /** The admin key in the environment, as the other CLI tests run. */
  let env: Record<string, string>;
  const loginFile = () => join(config, "assay", "config.json");

  before(async () => {
    service = await startTestService();
    base = service.coordinator.baseUrl;
    dir = mkdtempSync(join(tmpdir(), "assay-cli-account-"));
    config = join(dir, "config");
    bare = { XDG_CONFIG_HOME: config };
    env = { ...bare, ASSAY_API_KEY: TEST_ADMIN_KEY, ASSAY_BASE_URL: base };
  });
  after(async () => {
    await service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const apiJson = async (path: string): Promise<Json> => {
    const res = await service.api(path);
    assert.equal(res.status, 200, path);
    return (await res.json()) as Json;
  };

  it("login at a terminal: the key is not echoed, the file is 0600 in a 0700 folder; whoami and later commands use it", async () => {
    const login = startCliInPty(["login"], bare, dir);
    await login.waitFor(/Assay API URL \[http:\/\/127\.0\.0\.1:8080\]: /, "the URL prompt");
    login.write(`${base}\r`);
    await login.waitFor(/API key \(asy_live_\.\.\., not shown as you type\): /, "the key prompt");
    login.write(`${TEST_ADMIN_KEY}\r`);
    assert.equal(await login.exited, 0, login.output());
    const shown = login.output();
    assert.ok(!shown.includes(TEST_ADMIN_KEY), `the key was echoed or printed:\n${shown}`);
    assert.ok(!shown.includes(TEST_ADMIN_KEY.slice(9, 20)), "no large part of the key shows either");
    assert.match(shown, new RegExp(`logged in to ${base} as .+ \\(acct_default\\) with key asy_live_Test… \\(key_\\w+; `));

    assert.equal(statSync(loginFile()).mode & 0o777, 0o600);
    assert.equal(statSync(join(config, "assay")).mode & 0o777, 0o700);
    const stored = JSON.parse(readFileSync(loginFile(), "utf8")) as Json;
    assert.equal(stored.api_key, TEST_ADMIN_KEY);
    assert.equal(stored.base_url, `${base}/`);

    // No key or URL in the environment: the stored login supplies both.
    const whoami = await runCliPiped(["whoami"], bare, dir);
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.match(whoami.stdout, new RegExp(`^api +${base} \\(from the stored login\\)$`, "m"));
    assert.match(whoami.stdout, /^key +asy_live_Test… key_\w+ \(from the stored login\)$/m);
    assert.match(whoami.stdout, /^scopes +.*keys:admin/m);
    assert.ok(!whoami.stdout.includes(TEST_ADMIN_KEY));
    const robots = await runCliPiped(["robots", "--json"], bare, dir);
    assert.equal(robots.code, 0, robots.stderr);
    assert.deepEqual(JSON.parse(robots.stdout).data.map((r: Json) => r.id), (await apiJson("/v1/robots")).data.map((r: Json) => r.id));
  });

  it("precedence: a flag beats the environment beats the stored login; a stored key goes only to its own URL", async () => {
    // Another URL from the environment: the stored key is not sent there, and the error says why.
    const elsewhere = await runCliPiped(["robots"], { ...bare, ASSAY_BASE_URL: "http://127.0.0.2:9" }, dir);
    assert.equal(elsewhere.code, 2);
    assert.match(elsewhere.stderr, /^error: no API key: /);
    assert.ok(elsewhere.stderr.includes(`the stored login (${loginFile()}) is for ${base}, not http://127.0.0.2:9: its key is sent only there`), elsewhere.stderr);

    const bogus = "asy_live_NotAKeyAnybodyHas0123456789";
    const fromEnv = await runCliPiped(["whoami"], { ...bare, ASSAY_API_KEY: bogus }, dir);
    assert.equal(fromEnv.code, 3, "the environment's key was used, not the stored one");
    assert.equal(fromEnv.stderr.split("\n")[0], "error: unknown API key (invalid_api_key)");
    assert.ok(!fromEnv.stderr.includes(bogus), "the key is not in the error");

    const fromFlag = await runCliPiped(["whoami", "--key", TEST_ADMIN_KEY], { ...bare, ASSAY_API_KEY: bogus }, dir);
    assert.equal(fromFlag.code, 0, fromFlag.stderr);
    assert.match(fromFlag.stdout, /^key +asy_live_Test… key_\w+ \(from the command line\)$/m);
    assert.match(fromFlag.stdout, /\(from the stored login\)$/m, "the URL still comes from the stored login");
  });

  it("login --key-stdin for scripts; a wrong key stores nothing; logout removes the file", async () => {
    const logout = await runCliPiped(["logout"], bare, dir);
    assert.equal(logout.code, 0, logout.stderr);
    assert.equal(logout.stdout, `removed the stored login ${loginFile()}; the key itself still works until revoked (assay keys revoke <key_id>)\n`);
    assert.equal(existsSync(loginFile()), false);
    assert.equal((await runCliPiped(["whoami"], bare, dir)).code, 2, "no key anywhere now");

    const noTerminal = await runCliPiped(["login", "--url", base], bare, dir);
    assert.equal(noTerminal.code, 2);
    assert.match(noTerminal.stderr, /^error: no terminal to type the API key at: pipe it with --key-stdin/);

    const wrong = await runCliPiped(["login", "--url", base, "--key-stdin"], bare, dir, "asy_live_NotAKeyAnybodyHas0123456789\n");
    assert.equal(wrong.code, 3);
    assert.match(wrong.stderr, /^error: unknown API key \(invalid_api_key\); nothing was stored\nsee .*#invalid_api_key\n$/);
    assert.equal(existsSync(loginFile()), false);

    const piped = await runCliPiped(["login", "--url", base, "--key-stdin"], bare, dir, `${TEST_ADMIN_KEY}\n`);
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(!`${piped.stdout}${piped.stderr}`.includes(TEST_ADMIN_KEY));
    assert.equal(statSync(loginFile()).mode & 0o777, 0o600);

    // A stored login others can read still works, with a warning.
    chmodSync(loginFile(), 0o644);
    const loose = await runCliPiped(["whoami"], bare, dir);
    assert.equal(loose.code, 0, loose.stderr);
    assert.match(loose.stderr, /warning: .*config\.json can be read by other users \(mode 0644\); chmod 600 /);
    chmodSync(loginFile(), 0o600);
  });

  it("keys create prints the secret once with a warning; list shows hints only; revoke ends the key", async () => {
    const created = await runCliPiped(["keys", "create", "--scope", "runs:read"], env, dir);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /shown this once and never again/);
    const secret = /^secret +(asy_live_\w+)$/m.exec(created.stdout)?.[1];
    const id = /^created (key_\w+) \(runs:read\)$/m.exec(created.stdout)?.[1];
    assert.ok(secret && id, created.stdout);

    const asNewKey = await runCliPiped(["whoami", "--key", secret], env, dir);
    assert.equal(asNewKey.code, 0, asNewKey.stderr);
    assert.match(asNewKey.stdout, /^scopes +runs:read$/m);

    const list = await runCliPiped(["keys", "list"], env, dir);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^KEY +HINT +SCOPES +CREATED +REVOKED$/m);
    assert.match(list.stdout, new RegExp(`^${id} +${secret.slice(0, 15)}\\S* +runs:read +\\S+ \\S+ +-$`, "m"));
    assert.ok(!list.stdout.includes(secret));

    const tooMuch = await runCliPiped(["keys", "create", "--scope", "runs:read,everything"], env, dir);
    assert.equal(tooMuch.code, 3);
    assert.match(tooMuch.stderr, /everything/);

    const revoked = await runCliPiped(["keys", "revoke", id], env, dir);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, new RegExp(`^${id} \\(asy_live_\\w{6}\\S*\\) revoked at `));
    const after = await runCliPiped(["whoami", "--key", secret], env, dir);
    assert.equal(after.code, 3);
    assert.match(after.stderr, new RegExp(`API key ${id} was revoked at .* \\(invalid_api_key\\)`));
  });

  it("models upload: broken mid-way it says how far it got; the same command resumes there; the stored sha256 matches", async () => {
    const bytes = paddedModel(200_000);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    writeFileSync(join(dir, "policy.onnx"), bytes);
    const upload = ["models", "upload", "policy.onnx", "--name", "acme/cli-resume", "--chunk-size", "64KiB"];
    // The second chunk's connection is dropped: the first chunk (64 KiB) is stored, the rest is not.
    const proxy = await startRequestCuttingProxy(base, (req, seen) => req.method === "PUT" && seen === 1);
    let broken;
    try {
      broken = await runCliPiped(upload, { ...env, ASSAY_BASE_URL: proxy.url }, dir);
    } finally {
      await proxy.close();
    }
    assert.equal(broken.code, 3, broken.stdout);
    assert.equal(proxy.cuts(), 1);
    const id = /as (mdl_\w+) \(acme\/cli-resume\)/.exec(broken.stdout)?.[1];
    assert.ok(id, broken.stdout);
    assert.match(broken.stdout, /^uploading: 0% of 20\d\.\d kB$/m);
    assert.match(broken.stderr, new RegExp(`^error: the upload of model ${id} broke after 65\\.5 kB of 20\\d\\.\\d kB were stored \\(.+\\); run the same command again to resume from there$`, "m"));
    assert.equal((await apiJson(`/v1/models/${id}`)).received_bytes, 65_536);

    const resumed = await runCliPiped(upload, env, dir);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`^resuming the upload of ${id} \\(acme/cli-resume\\) at 65\\.5 kB of 20\\d\\.\\d kB$`, "m"));
    assert.match(resumed.stdout, /^uploading: 100% of 20\d\.\d kB$/m);
    assert.ok(resumed.stdout.includes(`${id} ready: acme/cli-resume, `), resumed.stdout);
    const model = await apiJson(`/v1/models/${id}`);
    assert.equal(model.status, "ready");
    assert.equal(model.sha256, sha256);
    assert.equal(model.bytes, bytes.length);

    const got = await runCliPiped(["models", "get", id], env, dir);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, new RegExp(`^sha256 +${sha256}$`, "m"));
    assert.match(got.stdout, /^inputs +\S+ float32\[/m);
    const list = await runCliPiped(["models", "list", "--json"], env, dir);
    assert.deepEqual(JSON.parse(list.stdout), await apiJson("/v1/models"));

    // Under a terminal the upload draws a bar; the same name and revision again is the API's 422, in its words.
    const bar = await runCliInPty([...upload, "--revision", "v2"], env, dir);
    assert.equal(bar.code, 0, bar.output);
    assert.match(bar.output, /uploading █+ 100% 20\d\.\d kB\/20\d\.\d kB/);
    assert.match(bar.output, /ready: acme\/cli-resume@v2, /);
    const again = await runCliInPty(upload, env, dir);
    assert.equal(again.code, 3);
    assert.match(again.output, /error: .*acme\/cli-resume.* \(contract_validation_failed\)/);
  });

  it("tasks create from a JSON file, get, list; pilot and freeze answer in the API's words", async () => {
    const spec = {
      name: "cli-stack",
      initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0] } },
      success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
    };
    writeFileSync(join(dir, "task.json"), JSON.stringify(spec));
    const created = await runCliPiped(["tasks", "create", "task.json"], env, dir);
    assert.equal(created.code, 0, created.stderr);
    const id = /^created (task_\w+) \(draft\)$/m.exec(created.stdout)?.[1];
    assert.ok(id, created.stdout);
    assert.match(created.stdout, /^status +draft$/m);
    assert.match(created.stdout, /^success +lifted: pose\(cube\)\.z > 0\.06 for 1\.0s$/m);
    assert.ok(created.stdout.includes(`pilot it: assay tasks pilot ${id} --robot so101@latest`));

    const get = await runCliPiped(["tasks", "get", id, "--json"], env, dir);
    assert.deepEqual(JSON.parse(get.stdout), await apiJson(`/v1/tasks/${id}`));
    const seeded = await runCliPiped(["tasks", "get", "pick-cube@v1"], env, dir);
    assert.match(seeded.stdout, /^status +frozen$/m);
    const list = await runCliPiped(["tasks", "list"], env, dir);
    assert.match(list.stdout, new RegExp(`^${id} +- +draft +private +standard `, "m"));

    const early = await runCliPiped(["tasks", "freeze", id], env, dir);
    assert.equal(early.code, 3);
    assert.match(early.stderr, /is a draft; pilot the task before freezing it .*\(contract_validation_failed\)\nsee .*#contract_validation_failed/);
    // The pilot run is queued (no cells here run it); freezing needs only that it started.
    const pilot = await runCliPiped(["tasks", "pilot", id, "--robot", "so101@latest", "--episodes", "1"], env, dir);
    assert.equal(pilot.code, 0, pilot.stderr);
    const pilotRun = new RegExp(`^piloting ${id}: run (run_\\w+) on so101@[\\d.]+, 1 episodes`, "m").exec(pilot.stdout)?.[1];
    assert.ok(pilotRun, pilot.stdout);
    assert.equal((await apiJson(`/v1/tasks/${id}`)).pilot.run_id, pilotRun);
    const freeze = await runCliPiped(["tasks", "freeze", id], env, dir);
    assert.equal(freeze.code, 0, freeze.stderr);
    assert.match(freeze.stdout, new RegExp(`^froze ${id} as cli-stack@v\\d+$`, "m"));
    assert.match(freeze.stdout, /^status +frozen$/m);
    assert.match(freeze.stdout, /^signatures +ed25519:\S+, ed25519:\S+$/m);
    const again = await runCliPiped(["tasks", "freeze", id], env, dir);
    assert.equal(again.code, 3);
    assert.match(again.stderr, /frozen and immutable; create the next revision/);

    const notObject = await runCliPiped(["tasks", "create", "-"], env, dir, "[1, 2]");
    assert.equal(notObject.code, 2);
    assert.match(notObject.stderr, /^error: the body on stdin must be a JSON object \(a Task Spec such as \{"name": /);
    const invalid = await runCliPiped(["tasks", "create", "-"], env, dir, JSON.stringify({ ...spec, colour: "red" }));
    assert.equal(invalid.code, 3);
    assert.match(invalid.stderr, /colour.*\(contract_validation_failed\)/);
  });

  it("leaderboards without a key; runs get --web hands the run's page to $BROWSER, or prints it without a terminal", async () => {
    const boards = await runCliPiped(["leaderboards", "list"], { XDG_CONFIG_HOME: join(dir, "nobody"), ASSAY_BASE_URL: base }, dir);
    assert.equal(boards.code, 0, boards.stderr);
    assert.match(boards.stdout, /^no leaderboards yet/);
    const unknown = await runCliPiped(["leaderboards", "get", "lb_nothing"], { XDG_CONFIG_HOME: join(dir, "nobody"), ASSAY_BASE_URL: base }, dir);
    assert.equal(unknown.code, 3);
    assert.match(unknown.stderr, /\(not_found\)/);

    const submitted = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } });
    const runId = ((await submitted.json()) as Json).id as string;
    const page = `${base}/runs/${runId}`;
    const seen = join(dir, "browser-saw.txt");
    const browser = join(dir, "fake-browser.sh");
    writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$@" > '${seen}'\n`, { mode: 0o755 });

    const opened = await runCliInPty(["runs", "get", runId, "--web"], { ...env, BROWSER: `/nonexistent/browser:${browser}` }, dir);
    assert.equal(opened.code, 0, opened.output);
    assert.equal(readFileSync(seen, "utf8"), `${page}\n`, "BROWSER's second command got the page's URL as its argument");
    assert.match(opened.output, new RegExp(`opened ${page.replace(/[/.]/g, "\\$&")} \\(${browser.replace(/[/.]/g, "\\$&")}\\)`));
    rmSync(seen);

    const placeholder = await runCliInPty(["runs", "get", runId, "--web"], { ...env, BROWSER: `${browser} --new-tab=%s` }, dir);
    assert.equal(placeholder.code, 0, placeholder.output);
    assert.equal(readFileSync(seen, "utf8"), `--new-tab=${page}\n`, "%s is replaced by the URL");
    rmSync(seen);

    const piped = await runCliPiped(["runs", "get", runId, "--web"], { ...env, BROWSER: browser }, dir);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stdout, `${page}\n`);
    const printed = await runCliInPty(["runs", "get", runId, "--print-url"], { ...env, BROWSER: browser }, dir);
    assert.match(printed.output, new RegExp(`^${page.replace(/[/.]/g, "\\$&")}$`, "m"));
    assert.equal(existsSync(seen), false, "neither opened a browser");

    const noOpener = await runCliInPty(["runs", "get", runId, "--web"], { ...env, BROWSER: "/nonexistent/browser", PATH: dir }, dir);
    assert.equal(noOpener.code, 0, noOpener.output);
    assert.match(noOpener.output, /no browser could be started \(tried BROWSER \(\/nonexistent\/browser\), xdg-open\); open the run's page yourself:/);
    assert.ok(noOpener.output.includes(page));
  });
});

describe("assay leaderboards: a board as a readable table, without a key (simulated fleet)", function () {
  this.timeout(300_000);
  let service: TestService;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("lists the board with its leader and shows the entries ranked, with tier, n, rate and interval", async () => {
    // An account of its own, opted in: publishing must not change the shared fleet's default account.
    const now = new Date();
    await ensureAccount(service.coordinator.db, "acct_cli_boards", "CLI Boards", now.toISOString());
    const key = (await createApiKey(service.coordinator.db, "acct_cli_boards", ["keys:admin", "runs:read", "runs:write"], now)).secret;
    const call = async (path: string, method: string, json: unknown, status: number): Promise<Json> => {
      const res = await fetch(service.coordinator.baseUrl + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(json) });
      const body = (await res.json()) as Json;
      assert.equal(res.status, status, JSON.stringify(body));
      return body;
    };
    await call("/v1/account", "PUT", { leaderboard: { opt_in: true, display_name: "CLI Lab" } }, 200);
    const run = await call("/v1/runs", "POST", { ...README_RUN_BODY, episodes: 2, policy_name: "cli-expert", publish: "leaderboard" }, 201);
    assert.equal((await waitForRunEnd(service.coordinator.baseUrl, key, run.id)).status, "completed");

    const dir = mkdtempSync(join(tmpdir(), "assay-cli-boards-"));
    try {
      const anonymous = { XDG_CONFIG_HOME: dir, ASSAY_BASE_URL: service.coordinator.baseUrl };
      const listed = await runCliPiped(["leaderboards", "list"], anonymous, dir);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^BOARD +KIND +SUBJECT +ROBOT +ENTRIES +LEADER +RATE +95% CI +UPDATED$/m);
      const boards = ((await (await fetch(`${service.coordinator.baseUrl}/v1/leaderboards`)).json()) as Json).data as Json[];
      const board = boards.find((b) => b.pins.subject === "pick-cube@v1" && b.pins.environment === "tabletop@1" && b.pins.perturbation === null);
      assert.ok(board, JSON.stringify(boards));
      assert.match(listed.stdout, new RegExp(`^${board.id} +task +pick-cube@v1 +so101@[\\d.]+ +${board.entries} +`, "m"));

      const shown = await runCliPiped(["leaderboards", "get", board.id], anonymous, dir);
      assert.equal(shown.code, 0, shown.stderr);
      const full = (await (await fetch(`${service.coordinator.baseUrl}/v1/leaderboards/${board.id}`)).json()) as Json;
      assert.ok(shown.stdout.startsWith(`board    ${board.id}: ${full.title}\n`), shown.stdout);
      assert.match(shown.stdout, /^RANK +TIER +POLICY +ACCOUNT +N +RATE +95% CI +RUN$/m);
      const entry = full.entries.find((e: Json) => e.run_id === run.id);
      const [lo, hi] = entry.ci95.map((x: number) => x.toFixed(2));
      assert.match(shown.stdout, new RegExp(`^ +${entry.rank} +${entry.tier} +cli-expert +CLI Lab +2 +${entry.success_rate.toFixed(2)} +\\[${lo}, ${hi}\\] +${run.id}$`, "m"));
      assert.match(shown.stdout, /^Ranked by the lower end of each entry's 95% interval; .* at most 0\.05\.$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      // Leave the shared service as found: boards are global, so this account's entry would join later files' boards.
      await call("/v1/account", "PUT", { leaderboard: { opt_in: false } }, 200);
    }
  });
});

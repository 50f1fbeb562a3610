/**
 * How `assay runs get --web` turns a BROWSER entry into a command line (cli/open-url.ts): words split
 * as a shell would, `%s` replaced by the URL (`%%` a literal %), otherwise the URL appended; and the
 * sizes `models upload --chunk-size` accepts.
 */
import assert from "node:assert/strict";
import { chunkSize } from "../../cli/commands/models.js";
import { browserArgv, splitCommand } from "../../cli/open-url.js";

const URL = "http://127.0.0.1:8080/runs/run_abc?x=1&y=2";

describe("cli: BROWSER commands and chunk sizes", () => {
  it("splits words with quotes and escapes as a shell would", () => {
    assert.deepEqual(splitCommand("firefox"), ["firefox"]);
    assert.deepEqual(splitCommand("  '/Applications/My Browser' --new-tab  "), ["/Applications/My Browser", "--new-tab"]);
    assert.deepEqual(splitCommand(String.raw`my\ browser "a \"b\"" ''`), ["my browser", 'a "b"', ""]);
  });

  it("appends the URL, or puts it where %s is; %% is a literal percent sign", () => {
    assert.deepEqual(browserArgv("firefox --new-tab", URL), ["firefox", "--new-tab", URL]);
    assert.deepEqual(browserArgv("chromium --app=%s", URL), ["chromium", `--app=${URL}`]);
    assert.deepEqual(browserArgv("echo 100%% %s", URL), ["echo", "100%", URL]);
    assert.deepEqual(browserArgv("echo 100%%s", URL), ["echo", "100%s", URL], "%%s is a literal %s, not the placeholder");
  });

  it("accepts chunk sizes from 1 byte to 64 MiB, with units", () => {
    assert.equal(chunkSize("8MiB"), 8 * 1024 * 1024);
    assert.equal(chunkSize("512KiB"), 512 * 1024);
    assert.equal(chunkSize("1000000"), 1_000_000);
    assert.equal(chunkSize("64MiB"), 64 * 1024 * 1024);
    for (const bad of ["0", "65MiB", "8 GB", "-1", "lots", "1.5MiB"]) assert.throws(() => chunkSize(bad), /a size from 1 byte to 64MiB/, bad);
  });
});

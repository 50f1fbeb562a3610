/**
 * Opening a page in the user's browser the way other command-line tools do. `BROWSER` first (the
 * convention of xdg-utils, Python's webbrowser and git: a list of commands separated by ":" (";" on Windows), each
 * tried in turn; `%s` in a command is replaced by the URL, else the URL is added as its last argument;
 * such a command keeps the terminal, since it may be a text browser), then the platform's opener
 * (`xdg-open`, macOS `open`, Windows `start`). Each is awaited, so the caller knows whether it worked.
 */
import { spawn, type SpawnOptions } from "node:child_process";
import { delimiter } from "node:path";

export type OpenResult = { opened: true; by: string } | { opened: false; why: string };

/** Splits a BROWSER entry into words, with '...' and "..." quoting and \ escapes as a shell would. */
export function splitCommand(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i];
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === "\\" && quote === '"' && i + 1 < command.length) word += command[++i];
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The argv of one BROWSER entry for `url`: `%s` replaced (`%%` is a literal %), else the URL appended. */
export function browserArgv(entry: string, url: string): string[] {
  const words = splitCommand(entry);
  const hasPlaceholder = words.some((w) => /(^|[^%])%s/.test(w));
  const filled = words.map((w) => w.replace(/%(%|s)/g, (_m, c: string) => (c === "s" ? url : "%")));
  return hasPlaceholder ? filled : [...filled, url];
}

/** Runs argv to its end; true when it exited 0, false when it failed or could not be started. */
function runOpener(argv: readonly string[], options: SpawnOptions): Promise<boolean> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), options);
    } catch {
      return resolve(false);
    }
    child.once("error", () => resolve(false));
    child.once("exit", (code) => resolve(code === 0));
  });
}

/** The platform's own opener for `url`. */
function platformOpener(url: string, platform: NodeJS.Platform): { argv: string[]; options: SpawnOptions } {
  if (platform === "darwin") return { argv: ["open", url], options: {} };
  // `start` is a cmd built-in; its first quoted argument is a window title, and & must be escaped for cmd.
  if (platform === "win32") return { argv: ["cmd", "/c", "start", '""', url.replace(/&/g, "^&")], options: { windowsVerbatimArguments: true } };
  return { argv: ["xdg-open", url], options: {} };
}

/** Opens `url` with $BROWSER's commands, else the platform's opener. */
export async function openUrl(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Promise<OpenResult> {
  const entries = (env.BROWSER ?? "").split(delimiter).map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    const argv = browserArgv(entry, url);
    if (argv.length > 0 && (await runOpener(argv, { stdio: "inherit", env }))) return { opened: true, by: argv[0] };
  }
  const { argv, options } = platformOpener(url, platform);
  if (await runOpener(argv, { ...options, stdio: "ignore", env })) return { opened: true, by: argv[0] };
  const tried = [...entries.map((e) => `BROWSER (${splitCommand(e)[0] ?? e})`), argv[0]].join(", ");
  return { opened: false, why: `no browser could be started (tried ${tried})` };
}

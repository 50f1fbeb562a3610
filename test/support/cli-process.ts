/**
 * The `assay` command line as its own process, the way a person or a script runs it: under a
 * pseudo-terminal (node-pty), where stdout is a TTY and progress is drawn as bars, or with pipes,
 * where stdout and stderr are read apart and progress comes as lines. Both start bin/assay.mjs, the
 * entry `npx assay` runs.
 */
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as pty from "node-pty";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ASSAY_BIN = join(REPO, "bin", "assay.mjs");

/** A process that outlived this safety net is killed, so a hung CLI fails its test instead of the suite. */
const KILL_AFTER_MS = 240_000;

/** Removes terminal control sequences (colours, cursor moves, save/restore) and carriage returns. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r/g, "");
}

export interface PtyCli {
  /** Everything the process wrote to the terminal so far, control sequences included. */
  output(): string;
  /** Resolves with the output once `pattern` appears in it (control sequences stripped). */
  waitFor(pattern: RegExp, what?: string): Promise<string>;
  /** The exit code, once the process ended. */
  exited: Promise<number>;
  /** Types `data` at the terminal (a key and "\r" for Enter). */
  write(data: string): void;
}

/** Starts `assay <args>` under a 160 x 40 pseudo-terminal with exactly `env` (plus PATH and HOME). */
export function startCliInPty(args: readonly string[], env: Record<string, string>, cwd: string): PtyCli {
  const child = pty.spawn(process.execPath, [ASSAY_BIN, ...args], {
    name: "xterm-256color",
    cols: 160,
    rows: 40,
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
  });
  let output = "";
  const waiters: Array<() => void> = [];
  child.onData((data) => {
    output += data;
    for (const check of [...waiters]) check();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  const exited = new Promise<number>((resolveExit) =>
    child.onExit(({ exitCode }) => {
      clearTimeout(timer);
      resolveExit(exitCode);
      for (const check of [...waiters]) check();
    }),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    output: () => output,
    exited,
    write: (data) => child.write(data),
    waitFor(pattern, what = String(pattern)) {
      return new Promise((resolveWait, reject) => {
        const check = () => {
          const text = stripAnsi(output);
          const settled = pattern.test(text) || ended;
          if (!settled || !waiters.includes(check)) return;
          waiters.splice(waiters.indexOf(check), 1);
          if (pattern.test(text)) resolveWait(text);
          else reject(new Error(`assay ${args.join(" ")} exited before printing ${what}:\n${text}`));
        };
        waiters.push(check);
        check();
      });
    },
  };
}

export interface CliResult {
  code: number;
  /** Under a pty: everything the terminal showed, control sequences stripped (stdout and stderr together). */
  output: string;
  /** The same, with its control sequences. */
  raw: string;
}

/** Runs `assay <args>` under a pseudo-terminal to its end. */
export async function runCliInPty(args: readonly string[], env: Record<string, string>, cwd: string): Promise<CliResult> {
  const cli = startCliInPty(args, env, cwd);
  const code = await cli.exited;
  return { code, output: stripAnsi(cli.output()), raw: cli.output() };
}

export interface PipedResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `assay <args>` with pipes (not a terminal), optionally writing `stdin`, to its end. */
export function runCliPiped(args: readonly string[], env: Record<string, string>, cwd: string, stdin?: string): Promise<PipedResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [ASSAY_BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolveRun({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(stdin ?? "");
  });
}

/**
 * The OCI engine's command line (`docker` or `podman`), as the container policy runtime and the
 * doctor use it: find the engine on PATH, run one subcommand with a deadline, and turn a failure into
 * a sentence that carries the engine's own last words ("docker run assay/x:1 failed (exit 125): ...").
 *
 * Commands run without a shell, so an image name or an env value is never interpreted.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export type EngineName = "docker" | "podman";

/** Engines tried, in this order, when the config names none. */
export const ENGINES: readonly EngineName[] = ["docker", "podman"];

export interface EngineOutput {
  /** Exit code; -1 when the command was killed at its deadline. */
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** True when `file` is executable. */
function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The engine to use: `preferred` when it is on `searchPath`, otherwise (no preference) the first of
 * docker, podman found there; undefined when none is.
 */
export function findEngine(preferred?: EngineName, searchPath: string = process.env.PATH ?? ""): ContainerEngineCli | undefined {
  const dirs = searchPath.split(delimiter).filter((d) => d !== "");
  for (const name of preferred ? [preferred] : ENGINES) {
    const dir = dirs.find((d) => executable(join(d, name)));
    if (dir) return new ContainerEngineCli(name, join(dir, name));
  }
  return undefined;
}

/** The last lines of an engine's stderr, on one line, at most `maxChars` long. */
export function stderrTail(stderr: string, maxChars = 400): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const tail = lines.slice(-3).join(" / ");
  return tail.length > maxChars ? `...${tail.slice(-maxChars)}` : tail;
}

/** What `imageDigest` reports. */
export interface ImageDigest {
  /** The image id, `sha256:<hex>`. */
  id: string;
  /** `<repository>@sha256:<hex>` for each registry the image was pulled from or pushed to. */
  repoDigests: string[];
}

/** One engine's CLI. */
export class ContainerEngineCli {
  /** `file`: the engine's executable (default: `name`, looked up on PATH). */
  constructor(readonly name: EngineName, private readonly file: string = name) {}

  /** Runs `<engine> ...args`; resolves with the output whatever the exit code, rejects only when the engine cannot be started. */
  exec(args: readonly string[], timeoutMs: number): Promise<EngineOutput> {
    return new Promise((resolve, reject) => {
      execFile(this.file, args, { timeout: Math.max(1, Math.round(timeoutMs)), maxBuffer: 4 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
        const failure = error as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
        if (failure && typeof failure.code === "string") {
          reject(Object.assign(new Error(`${this.name} cannot be started: ${failure.message}`), { code: failure.code }));
          return;
        }
        const timedOut = Boolean(failure?.killed);
        resolve({ code: timedOut ? -1 : typeof failure?.code === "number" ? failure.code : 0, stdout, stderr, timedOut });
      });
    });
  }

  /** Like `exec`, but a non-zero exit rejects with `<engine> <what> failed (exit N): <stderr tail>`. */
  async check(args: readonly string[], what: string, timeoutMs: number): Promise<string> {
    const out = await this.exec(args, timeoutMs);
    if (out.timedOut) throw new Error(`${this.name} ${what} did not finish within ${Math.round(timeoutMs / 1000)} s${out.stderr ? `: ${stderrTail(out.stderr)}` : ""}`);
    if (out.code !== 0) throw new Error(`${this.name} ${what} failed (exit ${out.code})${out.stderr ? `: ${stderrTail(out.stderr)}` : ""}`);
    return out.stdout;
  }

  /** The engine's version (the daemon's when there is one); rejects when the engine or its daemon does not answer. */
  async version(timeoutMs = 10_000): Promise<string> {
    const stdout = await this.check(["version", "--format", "{{json .}}"], "version", timeoutMs);
    let parsed: { Server?: { Version?: string } | null; Client?: { Version?: string } | null };
    try {
      parsed = JSON.parse(stdout) as typeof parsed;
    } catch {
      return stdout.trim().split("\n")[0] ?? "unknown";
    }
    return parsed.Server?.Version ?? parsed.Client?.Version ?? "unknown";
  }

  /** True when `image` is present locally (no pull). */
  async hasImage(image: string, timeoutMs = 10_000): Promise<boolean> {
    const out = await this.exec(["image", "inspect", "--format", "{{.Id}}", image], timeoutMs);
    return out.code === 0;
  }

  /**
   * The local image's content-addressed id (`sha256:...`, what runs) and its registry digests
   * (`name@sha256:...`, empty for an image built here); undefined when the image is not present.
   */
  async imageDigest(image: string, timeoutMs = 10_000): Promise<ImageDigest | undefined> {
    const out = await this.exec(["image", "inspect", "--format", "{{.Id}} {{json .RepoDigests}}", image], timeoutMs);
    if (out.code !== 0) return undefined;
    const line = out.stdout.trim();
    const space = line.indexOf(" ");
    const id = space < 0 ? line : line.slice(0, space);
    let repoDigests: string[] = [];
    try {
      const parsed = JSON.parse(space < 0 ? "[]" : line.slice(space + 1)) as unknown;
      if (Array.isArray(parsed)) repoDigests = parsed.filter((d): d is string => typeof d === "string");
    } catch {
      // an engine that prints something else: the id alone
    }
    return { id, repoDigests };
  }

  /** Names of containers (running or not) whose name contains `fragment`. */
  async containerNames(fragment: string, options: { all: boolean }, timeoutMs = 10_000): Promise<string[]> {
    const args = ["ps", ...(options.all ? ["--all"] : []), "--filter", `name=${fragment}`, "--format", "{{.Names}}"];
    const stdout = await this.check(args, "ps", timeoutMs);
    return stdout.split("\n").map((l) => l.trim()).filter((l) => l.includes(fragment));
  }

  /** The last lines a container printed (stdout and stderr), on one line; "" when there are none or the engine cannot say. */
  async logTail(name: string, lines = 5, timeoutMs = 10_000): Promise<string> {
    const out = await this.exec(["logs", "--tail", String(lines), name], timeoutMs).catch(() => undefined);
    return out && out.code === 0 ? stderrTail(`${out.stdout}\n${out.stderr}`) : "";
  }

  /** Removes containers by name, running or not; a container that is already gone is no error. */
  async remove(names: readonly string[], timeoutMs = 30_000): Promise<void> {
    if (names.length === 0) return;
    const out = await this.exec(["rm", "-f", ...names], timeoutMs);
    if (out.code !== 0 && !/no such container/i.test(out.stderr)) {
      throw new Error(`${this.name} rm -f ${names.join(" ")} failed (exit ${out.code}): ${stderrTail(out.stderr)}`);
    }
  }
}

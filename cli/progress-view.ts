/**
 * Progress on a terminal or in a log: a cli-progress bar when the stream is a TTY, otherwise one plain
 * line per change (so CI logs and pipes get readable lines, not cursor movements). Under --json,
 * stdout carries only the API's JSON, so the bar moves to stderr when that is a terminal and is left
 * out otherwise.
 */
import cliProgress from "cli-progress";

export type Tokens = Record<string, string>;

export interface ProgressView {
  /** Shows `value` of `total` with the format's tokens. */
  update(value: number, total: number, tokens: Tokens): void;
  /** Draws the last state and leaves it on screen. */
  stop(): void;
}

export interface ProgressViewOptions {
  /** cli-progress format: `{bar}` plus the token names given to update(). */
  barFormat: string;
  /** The plain line for a log; a line equal to the previous one is not printed again. */
  lineOf: (value: number, total: number, tokens: Tokens) => string;
}

export type ProgressPlace = { kind: "bar" | "lines"; stream: NodeJS.WriteStream } | { kind: "none" };

/** Where progress goes: stdout for people, stderr (terminal only) under --json. */
export function progressPlace(json: boolean, stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): ProgressPlace {
  if (!json) return { kind: stdout.isTTY ? "bar" : "lines", stream: stdout };
  return stderr.isTTY ? { kind: "bar", stream: stderr } : { kind: "none" };
}

export function progressView(place: ProgressPlace, options: ProgressViewOptions): ProgressView {
  if (place.kind === "none") return { update() {}, stop() {} };
  const { stream } = place;
  if (place.kind === "lines") {
    let last = "";
    return {
      update(value, total, tokens) {
        const line = options.lineOf(value, total, tokens);
        if (line !== last) stream.write(`${line}\n`);
        last = line;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: options.barFormat, stream, hideCursor: true, barsize: 24, gracefulExit: false },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  return {
    update(value, total, tokens) {
      if (stopped) return;
      if (!started) {
        bar.start(total, value, tokens);
        started = true;
        return;
      }
      if (bar.getTotal() !== total) bar.setTotal(total);
      bar.update(value, tokens);
    },
    stop() {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}

// Mocha's spec reporter plus, at the end, the slowest spec files (wall time from a file's first hook or
// test to its last, and the CPU the test process and every process it started spent meanwhile: simulated
// cells, ffmpeg, browsers, so the suite's time can be read off CI's output) and one closing line CI can
// read: "N passed, N failed, N skipped". Before it, each failure again in a few lines ("failed: ..."), so
// the end of a long log (all CI shows) names what failed and why.
"use strict";
const Mocha = require("mocha");
const { readdirSync, readFileSync, writeFileSync } = require("node:fs");
const { relative } = require("node:path");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

const SLOWEST_SHOWN = 15;
const TICKS_PER_S = 100; // USER_HZ on Linux
const FAILURE_MESSAGE_CHARS = 600;

/**
 * A failure in a few lines: where (spec file and full title), the error's message (its first lines), and
 * the innermost stack frame in the repository's own code outside node_modules.
 */
function failureLines(test, err) {
  const where = `${test.file ? `${relative(process.cwd(), test.file)}: ` : ""}${test.fullTitle()}`;
  const message = String(err?.message ?? err).split("\n").slice(0, 4).join(" | ").slice(0, FAILURE_MESSAGE_CHARS);
  // Mocha has already made the stack's paths relative to the working directory.
  const frame = String(err?.stack ?? "").split("\n")
    .find((line) => /^\s+at /.test(line) && !/node_modules|\(node:|at node:/.test(line));
  const own = frame?.trim().replace(`file://${process.cwd()}/`, "").replace(`${process.cwd()}/`, "");
  return [`failed: ${where}`, `failed:   ${err?.name ?? "Error"}: ${message}`, ...(own ? [`failed:   ${own}`] : [])];
}

/** utime, stime, cutime, cstime (ticks) and the parent of a /proc/<pid>/stat line; undefined when it is gone. */
function procStat(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = line.slice(line.lastIndexOf(")") + 2).split(" "); // fields[0] is field 3 (state)
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds spent so far by this process and all its descendants: the live ones' own and reaped children's
 * ticks, plus what this process reaped. Linux only (elsewhere: undefined, and the column is left out).
 */
function treeCpuS() {
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return undefined;
  }
  const stats = new Map();
  for (const pid of pids) {
    const stat = procStat(pid);
    if (stat) stats.set(pid, stat);
  }
  const children = new Map();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let ticks = 0;
  const queue = [process.pid];
  while (queue.length > 0) {
    const pid = queue.pop();
    ticks += stats.get(pid)?.ticks ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  return stats.has(process.pid) ? ticks / TICKS_PER_S : undefined;
}

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map(); // file -> { ms, open: started-at of the outermost open suite, depth }
    const failed = [];
    runner.on(EVENT_TEST_FAIL, (test, err) => failed.push(...failureLines(test, err)));
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (!suite.file) return;
      const entry = files.get(suite.file) ?? { ms: 0, cpuS: 0, startedAt: 0, cpuAt: 0, depth: 0 };
      if (entry.depth++ === 0) {
        entry.startedAt = performance.now();
        entry.cpuAt = treeCpuS();
      }
      files.set(suite.file, entry);
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const entry = suite.file && files.get(suite.file);
      if (!entry) return;
      if (--entry.depth === 0) {
        entry.ms += performance.now() - entry.startedAt;
        const cpuS = treeCpuS();
        entry.cpuS = cpuS === undefined || entry.cpuAt === undefined ? undefined : entry.cpuS + cpuS - entry.cpuAt;
      }
    });
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      // After the spec epilogue, so the summary is the last line printed.
      process.nextTick(() => {
        const slowest = [...files].sort((a, b) => b[1].ms - a[1].ms).slice(0, SLOWEST_SHOWN);
        // Every file's figures, for whoever is working on the suite's time (one file too):
        // ASSAY_TEST_TIMES=times.json npm test
        if (process.env.ASSAY_TEST_TIMES) {
          const all = [...files].map(([file, e]) => ({ file: relative(process.cwd(), file), wall_s: e.ms / 1000, cpu_s: e.cpuS }));
          writeFileSync(process.env.ASSAY_TEST_TIMES, JSON.stringify(all, null, 1));
        }
        if (slowest.length > 1) {
          const cpu = (e) => (e.cpuS === undefined ? "" : ` (cpu ${e.cpuS.toFixed(0)})`);
          console.log(`slowest spec files (wall s, and cpu s of the test process and all it started): ${slowest.map(([file, e]) => `${relative(process.cwd(), file)} ${(e.ms / 1000).toFixed(1)}${cpu(e)}`).join(", ")}`);
          const total = treeCpuS();
          if (total !== undefined) console.log(`cpu s of the test process and all it started, whole run: ${total.toFixed(0)}`);
        }
        for (const line of failed) console.log(line);
        console.log(`${passes} passed, ${failures} failed, ${pending} skipped`);
      });
    });
  }
}

module.exports = SummaryReporter;

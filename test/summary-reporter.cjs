// Mocha's spec reporter plus, at the end, the slowest spec files (wall time from a file's first hook or
// test to its last, so the suite's time can be read off CI's output) and one closing line CI can read:
// "N passed, N failed, N skipped".
"use strict";
const Mocha = require("mocha");
const { relative } = require("node:path");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

const SLOWEST_SHOWN = 15;

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const files = new Map(); // file -> { ms, open: started-at of the outermost open suite, depth }
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (!suite.file) return;
      const entry = files.get(suite.file) ?? { ms: 0, startedAt: 0, depth: 0 };
      if (entry.depth++ === 0) entry.startedAt = performance.now();
      files.set(suite.file, entry);
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const entry = suite.file && files.get(suite.file);
      if (!entry) return;
      if (--entry.depth === 0) entry.ms += performance.now() - entry.startedAt;
    });
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      // After the spec epilogue, so the summary is the last line printed.
      process.nextTick(() => {
        const slowest = [...files].sort((a, b) => b[1].ms - a[1].ms).slice(0, SLOWEST_SHOWN);
        if (slowest.length > 1) {
          console.log(`slowest spec files (wall s): ${slowest.map(([file, e]) => `${relative(process.cwd(), file)} ${(e.ms / 1000).toFixed(1)}`).join(", ")}`);
        }
        console.log(`${passes} passed, ${failures} failed, ${pending} skipped`);
      });
    });
  }
}

module.exports = SummaryReporter;

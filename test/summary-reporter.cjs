// Mocha's spec reporter plus one closing line CI can read: "N passed, N failed, N skipped".
"use strict";
const Mocha = require("mocha");
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      // After the spec epilogue, so it is the last line printed.
      process.nextTick(() => console.log(`${passes} passed, ${failures} failed, ${pending} skipped`));
    });
  }
}

module.exports = SummaryReporter;

/** Mocha root hooks (loaded by .mocharc.cjs `require`): stops what spec files shared, after the last one. */
import { runSuiteEnd } from "./suite-end.js";

export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(60_000);
    await runSuiteEnd();
  },
};

/**
 * Work over the store that must not overlap itself: a periodic tick, a worker's poll. Now that each
 * statement is awaited, a timer (or a kick) can fire while the previous run still awaits the
 * store. `singleFlight(work)` runs one at a time: a call while one runs asks for one more run after
 * it (however many calls arrive meanwhile), a run that throws is reported, and shutdown can wait
 * for the run in progress before the store closes:
 *
 *   const tick = singleFlight(async () => { ... }, (error) => logger.error(...));
 *   const timer = setInterval(() => void tick.run(), periodMs);
 *   // on stop: clearInterval(timer); await tick.idle();
 */
export interface SingleFlight {
  /** Starts the work, or asks for one more run after the one in progress; resolves when they end. Never rejects. */
  run(): Promise<void>;
  /** Resolves once no run is in progress. */
  idle(): Promise<void>;
}

export function singleFlight(work: () => Promise<void>, onError: (error: unknown) => void): SingleFlight {
  let running: Promise<void> | undefined;
  let again = false;
  return {
    run() {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          try {
            await work();
          } catch (error) {
            onError(error);
          }
        } while (again);
      })().finally(() => {
        running = undefined;
      });
      return running;
    },
    async idle() {
      await running;
    },
  };
}

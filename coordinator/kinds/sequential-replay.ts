/**
 * A sequential test replayed over a run's finished episodes after every episode, without replaying
 * them all each time. A kind's progress (threshold's soak and verify tests) feeds the test every
 * episode of its evidence in order and stops at the first decision; doing that from the first
 * episode after each one costs the whole evidence every time (0.1 ms an episode for the cell
 * threshold test: 1,000 episodes 60 ms after each episode, and the run's total grows with the square
 * of its length). `ReplayMemo` keeps the test as it stood after the steps it took; the next replay
 * continues it when those steps are, signature for signature, the first steps of the new evidence
 * (an episode whose outcome, cell or place changed, one invalidated, a transaction that was rolled
 * back: none is, and the test is replayed from the start). So the answer is always the one a replay
 * from the start gives, and the memo only spares work.
 *
 * The memo lives in one coordinator's run lifecycle, bounded (least recently used dropped); another
 * coordinator, or this one after a restart, replays from the start once.
 */
import { nextTurn } from "../async/next-turn.js";

/** A sequential test: each step fed in order; the decision is sticky once made (not "continue"). */
export interface SequentialTest<Step, Decision extends string> {
  update(step: Step): Decision;
}

/** One step of the evidence, and what identifies it (a step whose signature differs is a different step). */
export interface ReplayStep<Step> {
  signature: string;
  step: Step;
}

interface Replayed {
  test: SequentialTest<unknown, string>;
  /** Signatures of the steps the test took, in order. */
  taken: string[];
  decision: string;
}

export interface ReplayMemo {
  get(key: string): Replayed | undefined;
  set(key: string, value: Replayed): void;
}

/** The tests replayed last, at most `limit` of them (least recently used dropped). */
export function createReplayMemo(limit = 64): ReplayMemo {
  const entries = new Map<string, Replayed>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > limit) entries.delete(entries.keys().next().value!);
    },
  };
}

/**
 * The test after `steps` in order, stopped at its first decision: continued from `memo`'s test for
 * `key` when the steps it took begin `steps`, else made with `create()` and fed from the first step.
 * `perTurn` steps a turn of the event loop. `key` must name everything `create` depends on.
 */
export async function replaySequential<Step, Decision extends string, Test extends SequentialTest<Step, Decision>>(
  steps: readonly ReplayStep<Step>[], create: () => Test, options: { memo?: ReplayMemo; key: string; perTurn: number; continueDecision: Decision },
): Promise<{ test: Test; decision: Decision }> {
  const { memo, key, perTurn, continueDecision } = options;
  const cached = memo?.get(key);
  let replay: Replayed;
  if (cached && cached.taken.length <= steps.length && cached.taken.every((signature, i) => signature === steps[i].signature)) {
    replay = cached;
  } else {
    replay = { test: create() as SequentialTest<unknown, string>, taken: [], decision: continueDecision };
  }
  let fed = 0;
  while (replay.decision === continueDecision && replay.taken.length < steps.length) {
    if (++fed % perTurn === 0) await nextTurn();
    const next = steps[replay.taken.length];
    replay.decision = replay.test.update(next.step);
    replay.taken.push(next.signature);
  }
  memo?.set(key, replay);
  return { test: replay.test as Test, decision: replay.decision as Decision };
}

import { strict as assert } from "node:assert";
import { nextAgentState } from "../../cell-agent/agent-state.js";
import { InterventionGate, interventionAttention, nextInterventionPhase, type InterventionOffer } from "../../cell-agent/episode/intervention-gate.js";
import { OperatorInterventions, interventionSteps } from "../../cell-agent/episode/operator-intervention.js";
import type { Intervention, ResetPlan } from "../../cell-agent/hardware/types.js";

const plan: ResetPlan = {
  objects: { cube: { object: "cube", positionM: [0.22, -0.01, 0.015], yawRad: Math.PI / 2 } },
  lighting: "nominal", distractors: [], homeRad: [0, 0, 0, 0, 0, 0],
};
const request = { episodeId: "ep_1", kind: "on_stall" as const, tS: 6.2, what: "The policy stalled.", steps: ["Press Intervene."] };

/** Resolves with the next offer the gate announces that satisfies `test`. */
function announced(gate: InterventionGate, test: (offer: InterventionOffer | null) => boolean): Promise<InterventionOffer | null> {
  return new Promise((resolve) => {
    const stop = gate.subscribe((offer) => {
      if (!test(offer)) return;
      stop();
      resolve(offer);
    });
  });
}

describe("interventions a person performs at the operator station (cell agent)", () => {
  it("the phases move offered -> holding -> idle and refuse anything else", () => {
    assert.equal(nextInterventionPhase("idle", "offer"), "offered");
    assert.equal(nextInterventionPhase("offered", "press"), "holding");
    assert.equal(nextInterventionPhase("offered", "lapse"), "idle");
    assert.equal(nextInterventionPhase("holding", "done"), "idle");
    assert.equal(nextInterventionPhase("holding", "withdraw"), "idle");
    assert.throws(() => nextInterventionPhase("idle", "press"), /cannot press while idle/);
    assert.throws(() => nextInterventionPhase("idle", "done"), /cannot done while idle/);
    assert.throws(() => nextInterventionPhase("offered", "done"), /cannot done while offered/);
    assert.throws(() => nextInterventionPhase("holding", "press"), /cannot press while holding/);
    assert.throws(() => nextInterventionPhase("offered", "offer"), /cannot offer while offered/);
  });

  it("the agent is intervening while a person holds the episode, busy again after", () => {
    const busy = nextAgentState("idle", "assign");
    const held = nextAgentState(busy, "hold_for_person");
    assert.equal(held, "intervening");
    assert.equal(nextAgentState(held, "welcome"), "intervening");
    assert.equal(nextAgentState(held, "helped"), "busy");
    assert.equal(nextAgentState(held, "estop"), "estopped");
    assert.equal(nextAgentState(held, "episode_end"), "idle");
    assert.throws(() => nextAgentState("idle", "hold_for_person"), /cannot hold for_person while idle/);
  });

  it("announces the offer, takes Intervene only for its episode, then holds until Done", async () => {
    let nowMs = 10_000;
    const gate = new InterventionGate({ nowMs: () => nowMs });
    const seen: Array<string | null> = [];
    gate.subscribe((offer) => seen.push(offer ? offer.phase : null));
    const answer = gate.open(request);
    assert.equal(gate.current?.phase, "offered");
    assert.equal(gate.done("ep_1"), false, "Done before Intervene is refused");
    assert.equal(gate.press("ep_other"), false, "Intervene for another episode is refused");
    nowMs = 14_500;
    assert.equal(gate.press("ep_1"), true);
    assert.deepEqual(await answer, { answer: "pressed", waitedMs: 4500 });
    assert.equal(gate.press("ep_1"), false, "a second Intervene is refused");
    const attention = interventionAttention(gate.current!);
    assert.deepEqual(attention, {
      intervention: "on_stall", phase: "holding", what: "The policy stalled.", steps: ["Press Intervene."], t_s: 6.2,
      held_since: new Date(14_500).toISOString(),
    });
    const held = gate.held(new AbortController().signal);
    assert.equal(gate.done("ep_1", "moved the cube back"), true);
    assert.deepEqual(await held, { note: "moved the cube back" });
    assert.deepEqual(seen, ["offered", "holding", null]);
    assert.equal(gate.current, null);
  });

  it("an offer nobody takes lapses after offerTimeoutMs; a hold ends on abort or without Done in time", async () => {
    const gate = new InterventionGate({ offerTimeoutMs: 20, holdTimeoutMs: 20 });
    assert.deepEqual(await gate.open(request), { answer: "lapsed" });
    assert.equal(gate.current, null);

    void gate.open(request);
    gate.press("ep_1");
    await assert.rejects(gate.held(new AbortController().signal), /nobody pressed Done within 0 s/);
    assert.equal(gate.current, null);

    const slow = new InterventionGate({ holdTimeoutMs: 60_000 });
    void slow.open(request);
    slow.press("ep_1");
    const abort = new AbortController();
    const held = slow.held(abort.signal);
    abort.abort();
    await assert.rejects(held, /aborted while a person was helping/);
    assert.equal(slow.current, null);
  });

  it("asks with the plan's poses in words, and records the person's help with its timestamps", async () => {
    const steps = interventionSteps("scripted", plan);
    assert.match(steps.what, /Scripted intervention/);
    assert.ok(steps.steps.some((s) => s.includes("cube (cube) to x 220 mm, y -10 mm, yaw 90°")), steps.steps.join(" | "));

    let episodeS = 6.2;
    const gate = new InterventionGate({ nowMs: () => 50_000 });
    const worldHands: Intervention = {
      intervene: async () => {
        episodeS += 3; // the simulated world's hands take episode time; the person's wait does not
        return { durationS: 3, detail: "re-homed the arm" };
      },
    };
    const operator = new OperatorInterventions({ gate, episodeId: "ep_1", plan, elapsedS: () => episodeS, worldHands, nowMs: () => 50_000 });
    // The person: presses Intervene as soon as the cell asks (0.5 s of episode time later), Done after 2 s more.
    void announced(gate, (o) => o?.phase === "offered").then(() => {
      episodeS += 0.5;
      gate.press("ep_1");
    });
    void announced(gate, (o) => o?.phase === "holding").then(() => setImmediate(() => {
      episodeS += 2;
      gate.done("ep_1", "slid the cube back");
    }));
    const outcome = await operator.attend("on_stall", 6.2, new AbortController().signal);
    assert.equal(outcome.event.name, "intervention:on_stall");
    assert.equal(outcome.record?.by, "operator");
    assert.equal(outcome.record?.kind, "on_stall");
    assert.equal(outcome.record?.offered_t_s, 6.2);
    assert.equal(outcome.record?.t_s, 6.7);
    assert.equal(outcome.record?.end_t_s, 11.7);
    assert.equal(outcome.record?.duration_s, 5);
    assert.match(outcome.record!.detail, /a person helped at the operator station: slid the cube back; the simulated world: re-homed the arm/);
    assert.ok(Math.abs(outcome.pausedS - 2.5) < 1e-9, `paused ${outcome.pausedS} s: the wait and the hold, not the world's 3 s`);
    assert.equal(operator.offers, 1);
    assert.equal(gate.current, null);
  });

  it("an offer that lapses leaves the episode untouched and says so", async () => {
    const gate = new InterventionGate({ offerTimeoutMs: 20 });
    let touched = false;
    const operator = new OperatorInterventions({
      gate, episodeId: "ep_1", plan, elapsedS: () => 8, worldHands: { intervene: async () => { touched = true; return { durationS: 0, detail: "" }; } },
    });
    const outcome = await operator.attend("on_stall", 8, new AbortController().signal);
    assert.equal(outcome.record, undefined);
    assert.equal(outcome.event.name, "intervention_unanswered:on_stall");
    assert.match(outcome.event.detail, /Nobody pressed Intervene within 0 s; the episode goes on untouched/);
    assert.equal(touched, false);
  });

  it("an abort while the offer stands ends the wait at once", async () => {
    const gate = new InterventionGate();
    const operator = new OperatorInterventions({ gate, episodeId: "ep_1", plan, elapsedS: () => 8 });
    const abort = new AbortController();
    const attending = operator.attend("scripted", 4, abort.signal);
    abort.abort();
    const outcome = await attending;
    assert.equal(outcome.event.name, "intervention_unanswered:scripted");
    assert.match(outcome.event.detail, /withdrawn \(the episode was aborted\)/);
    assert.equal(gate.current, null);
  });
});

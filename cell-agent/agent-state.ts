/**
 * The agent's work state (what heartbeats report) and its only legal moves. Everything that changes
 * the state goes through `nextAgentState`, which throws on an illegal move.
 *
 * `awaiting_reset` is `busy` while the episode's reset waits for a person to set the scene (a real
 * cell, or a simulated one in operator reset mode); the person's confirmation moves it back to `busy`.
 * `awaiting_label` is `busy` after an episode whose success a person judges, until the label (or the
 * label timeout). `intervening` is `busy` while the episode is paused for a person's help with an
 * intervention (the policy gets no steps, the arm is held), from the offer until Done or the offer's lapse.
 */
export type AgentState = "idle" | "busy" | "awaiting_reset" | "awaiting_label" | "intervening" | "estopped" | "held" | "stopped";

export type AgentEvent =
  | "assign"        // an AssignEpisode was accepted
  | "await_person"  // the episode's reset began waiting for a person to set the scene
  | "person_done"   // that wait ended (confirmed, cancelled or timed out)
  | "await_label"   // the finished episode waits for a person's success label
  | "labelled"      // that wait ended (labelled, timed out or aborted)
  | "hold_for_person" // the episode paused for a person's help (an intervention was offered)
  | "helped"        // that pause ended (Done, the offer lapsed, or the episode ended)
  | "episode_end"   // the episode finished or was interrupted
  | "estop"         // the e-stop input fired
  | "estop_reset"   // a technician reset the e-stop with the input released
  | "refused"       // the coordinator sent a Refusal
  | "welcome"       // a new session began (clears a refusal)
  | "stop";

const MOVES: Record<AgentState, Partial<Record<AgentEvent, AgentState>>> = {
  idle: { assign: "busy", estop: "estopped", refused: "held", welcome: "idle", stop: "stopped" },
  busy: { await_person: "awaiting_reset", await_label: "awaiting_label", hold_for_person: "intervening", helped: "busy", person_done: "busy", episode_end: "idle", estop: "estopped", refused: "busy", welcome: "busy", stop: "stopped" },
  awaiting_label: { labelled: "busy", episode_end: "idle", estop: "estopped", refused: "awaiting_label", welcome: "awaiting_label", stop: "stopped" },
  intervening: { helped: "busy", episode_end: "idle", estop: "estopped", refused: "intervening", welcome: "intervening", stop: "stopped" },
  awaiting_reset: { person_done: "busy", episode_end: "idle", estop: "estopped", refused: "awaiting_reset", welcome: "awaiting_reset", stop: "stopped" },
  estopped: { person_done: "estopped", labelled: "estopped", helped: "estopped", episode_end: "estopped", estop: "estopped", estop_reset: "idle", refused: "estopped", welcome: "estopped", stop: "stopped" },
  held: { episode_end: "held", estop: "estopped", refused: "held", welcome: "idle", stop: "stopped" },
  stopped: { person_done: "stopped", labelled: "stopped", helped: "stopped", episode_end: "stopped", estop: "stopped", refused: "stopped", welcome: "stopped", stop: "stopped" },
};

export function nextAgentState(state: AgentState, event: AgentEvent): AgentState {
  const next = MOVES[state][event];
  if (!next) throw new Error(`the agent cannot ${event.replace("_", " ")} while ${state}`);
  return next;
}

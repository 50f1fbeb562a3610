/**
 * The agent's work state (what heartbeats report) and its only legal moves. Everything that changes
 * the state goes through `nextAgentState`, which throws on an illegal move.
 */
export type AgentState = "idle" | "busy" | "estopped" | "held" | "stopped";

export type AgentEvent =
  | "assign"        // an AssignEpisode was accepted
  | "episode_end"   // the episode finished or was interrupted
  | "estop"         // the e-stop input fired
  | "estop_reset"   // a technician reset the e-stop with the input released
  | "refused"       // the coordinator sent a Refusal
  | "welcome"       // a new session began (clears a refusal)
  | "stop";

const MOVES: Record<AgentState, Partial<Record<AgentEvent, AgentState>>> = {
  idle: { assign: "busy", estop: "estopped", refused: "held", welcome: "idle", stop: "stopped" },
  busy: { episode_end: "idle", estop: "estopped", refused: "busy", welcome: "busy", stop: "stopped" },
  estopped: { episode_end: "estopped", estop: "estopped", estop_reset: "idle", refused: "estopped", welcome: "estopped", stop: "stopped" },
  held: { episode_end: "held", estop: "estopped", refused: "held", welcome: "idle", stop: "stopped" },
  stopped: { episode_end: "stopped", estop: "stopped", refused: "stopped", welcome: "stopped", stop: "stopped" },
};

export function nextAgentState(state: AgentState, event: AgentEvent): AgentState {
  const next = MOVES[state][event];
  if (!next) throw new Error(`the agent cannot ${event.replace("_", " ")} while ${state}`);
  return next;
}

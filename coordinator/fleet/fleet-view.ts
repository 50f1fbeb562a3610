/**
 * What the rest of the coordinator may ask about the fleet. The gRPC registry implements it;
 * the HTTP API and the scheduler read through it.
 */
/**
 * What a cell needs from a person now (the agent's Attention). Only "reset" today; labels and
 * interventions will join as further kinds with their own payload.
 */
export interface CellAttention {
  /** "reset": set the scene; "label": judge the finished episode's success. */
  kind: "reset" | "label";
  /** The episode waiting on the person. */
  episodeId: string;
  /** When the cell started waiting (ISO 8601). */
  since: string;
  /** The scene to set, as the cell sent it (wire names: lighting, objects with position_m, yaw_rad, tolerance_m, distractors). */
  scene: Record<string, unknown>;
}

export interface ConnectedCell {
  cellId: string;
  model: string;
  /** Firmware the cell reported from its hardware. */
  firmware: string;
  environment: string;
  /** Instruments the cell configured and opened (its Hello). */
  instruments: Array<{ kind: string; name: string }>;
  /** Instruments of `instruments` that stopped answering (its latest heartbeat); empty when all answer. */
  instrumentsDown?: Array<{ kind: string; name: string }>;
  policyImages: string[];
  /** "idle", "busy", "awaiting_reset", "awaiting_label", "estopped", "held", "firmware_mismatch". */
  state: string;
  /** What the cell needs from a person now, if anything. */
  attention?: CellAttention;
  dutyCyclePct: number;
  /** Episode the cell is running, if any. */
  episodeId?: string;
  connectedAt: string;
}

export interface FleetView {
  connectedCells(): ConnectedCell[];
  /** The episode the coordinator has assigned to the cell and not yet seen end. */
  assignedEpisodeOf(cellId: string): string | undefined;
}

/**
 * What the rest of the coordinator may ask about the fleet. The gRPC registry implements it;
 * the HTTP API and the scheduler read through it.
 */
/** What a cell needs from a person now (the agent's Attention). */
export interface CellAttention {
  /** "reset": set the scene; "label": judge the finished episode's success; "intervene": help the paused episode. */
  kind: "reset" | "label" | "intervene";
  /** The episode waiting on the person. */
  episodeId: string;
  /** When the cell started waiting (ISO 8601). */
  since: string;
  /**
   * The payload as the cell sent it (wire names). reset: the scene to set (lighting, objects with position_m, yaw_rad,
   * tolerance_m, distractors); label: {instruction, predicates}; intervene: {intervention, phase, what, steps, t_s, held_since?}.
   */
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
  /** "idle", "busy", "awaiting_reset", "awaiting_label", "intervening", "estopped", "held", "firmware_mismatch". */
  state: string;
  /** What the cell needs from a person now, if anything. */
  attention?: CellAttention;
  dutyCyclePct: number;
  /** Episode the cell is running, if any. */
  episodeId?: string;
  connectedAt: string;
}

export interface FleetView {
  connectedCells(): Promise<ConnectedCell[]>;
  /** The episode the coordinator has assigned to the cell and not yet seen end. */
  assignedEpisodeOf(cellId: string): string | undefined;
}

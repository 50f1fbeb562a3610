/**
 * What the rest of the coordinator may ask about the fleet. The gRPC registry implements it;
 * the HTTP API and the scheduler read through it.
 */
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
  /** "idle", "busy", "estopped", "held", "firmware_mismatch". */
  state: string;
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

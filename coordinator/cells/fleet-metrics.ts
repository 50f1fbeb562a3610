/** Prometheus series of the fleet side, registered on the registry the coordinator exposes at /metrics. */
import { Counter, Gauge, type Registry } from "prom-client";

export interface FleetMetrics {
  cellsConnected: Gauge;
  episodesAssigned: Counter;
  episodesFinished: Counter<"outcome">;
  episodesInterrupted: Counter<"reason">;
  artifactBytesReceived: Counter;
  seqDedupes: Counter;
  cellMessagesWaiting: Gauge;
  cellStreamPauses: Counter;
}

export function createFleetMetrics(register: Registry): FleetMetrics {
  const registers = [register];
  return {
    cellsConnected: new Gauge({ name: "assay_cells_connected", help: "Cell agents with an open CellLink stream", registers }),
    episodesAssigned: new Counter({ name: "assay_episodes_assigned_total", help: "AssignEpisode messages sent to cells", registers }),
    episodesFinished: new Counter({ name: "assay_episodes_finished_total", help: "Episodes that reached an outcome", labelNames: ["outcome"], registers }),
    episodesInterrupted: new Counter({ name: "assay_episodes_interrupted_total", help: "Episode attempts put back to pending", labelNames: ["reason"], registers }),
    artifactBytesReceived: new Counter({ name: "assay_artifact_bytes_received_total", help: "Artifact bytes written to .part files", registers }),
    seqDedupes: new Counter({ name: "assay_cell_seq_dedupes_total", help: "Sequenced agent messages re-acked without being applied again", registers }),
    cellMessagesWaiting: new Gauge({ name: "assay_cell_messages_waiting", help: "Messages received on cells' Connect streams and not yet handled, all cells", registers }),
    cellStreamPauses: new Counter({ name: "assay_cell_stream_pauses_total", help: "Times a cell's Connect stream was paused because its unhandled messages reached the bound (64)", registers }),
  };
}

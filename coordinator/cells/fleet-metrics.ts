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
  /** Runs whose episodes have all finished, waiting for recordings (fleet/recording-waits.ts). */
  runsWaitingForRecordings: Gauge;
  /** Recordings those runs wait for, by the cell that holds them. */
  recordingsAwaited: Gauge<"cell">;
  /** Pending recordings whose episode finished over 15 min ago, their run not given up on, by cell. */
  recordingsOverdue: Gauge<"cell">;
  /** Recordings recorded missing (their run completed without them) and still not uploaded, by cell. */
  recordingsMissing: Gauge<"cell">;
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
    runsWaitingForRecordings: new Gauge({ name: "assay_runs_waiting_for_recordings", help: "Running runs whose episodes have all finished, waiting for recordings their cells have not uploaded", registers }),
    recordingsAwaited: new Gauge({ name: "assay_recordings_awaited", help: "Recordings the runs waiting for recordings wait for, by the cell holding them", labelNames: ["cell"], registers }),
    recordingsOverdue: new Gauge({ name: "assay_recordings_overdue", help: "Recordings not uploaded 15 min after their episode finished (runs still waiting or running), by cell", labelNames: ["cell"], registers }),
    recordingsMissing: new Gauge({ name: "assay_recordings_missing", help: "Recordings whose run completed without them (recordingWaitMs passed) and that are still not uploaded, by cell", labelNames: ["cell"], registers }),
  };
}

/** The agent's Prometheus metrics, in their own registry (one agent per registry, several per test process). */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export interface AgentMetrics {
  registry: Registry;
  /** How late each control step woke relative to its deadline, seconds. */
  controlJitterS: Histogram;
  missedPeriods: Counter;
  estops: Counter;
  uploadBacklog: Gauge;
  busErrors: Counter;
  episodes: Counter<"outcome">;
}

export function createAgentMetrics(cellId: string): AgentMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ cell: cellId });
  return {
    registry,
    controlJitterS: new Histogram({
      name: "assay_agent_control_jitter_seconds",
      help: "Lateness of each control step's wake-up against its deadline",
      buckets: [0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1],
      registers: [registry],
    }),
    missedPeriods: new Counter({ name: "assay_agent_control_missed_periods_total", help: "Control periods skipped because a step overran", registers: [registry] }),
    estops: new Counter({ name: "assay_agent_estops_total", help: "E-stop triggers", registers: [registry] }),
    uploadBacklog: new Gauge({ name: "assay_agent_upload_backlog", help: "Artifacts waiting to be uploaded", registers: [registry] }),
    busErrors: new Counter({ name: "assay_agent_bus_errors_total", help: "Failed motor bus or sensor reads and writes", registers: [registry] }),
    episodes: new Counter({ name: "assay_agent_episodes_total", help: "Episodes ended, by outcome (success, failure, interrupted)", labelNames: ["outcome"], registers: [registry] }),
  };
}

/** The agent's Prometheus metrics, in their own registry (one agent per registry, several per test process). */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export interface AgentMetrics {
  registry: Registry;
  /** How late each control step woke relative to its deadline, seconds. */
  controlJitterS: Histogram;
  missedPeriods: Counter;
  estops: Counter;
  uploadBacklog: Gauge;
  /** Artifacts the coordinator refused for good, set aside in `<dataDir>/rejected/`, by reason (artifact_unknown, artifact_not_yours). */
  uploadsSetAside: Counter<"reason">;
  busErrors: Counter;
  episodes: Counter<"outcome">;
  /** Trigger to torque-off confirmed, seconds, per e-stop. */
  estopLatencyS: Histogram;
  /** Protective stops (holds with torque on), by cause: missed_periods, link_lost, policy_endpoint_timeout, cancelled, ... */
  protectiveStops: Counter<"cause">;
  /** Policy targets clamped by the safety envelope, by kind (joint_limit, max_step, workspace). */
  safetyClamps: Counter<"kind">;
  /** Endpoint-policy steps whose reply missed latency_budget_ms (the step held position). */
  policyStepMisses: Counter;
  /**
   * Exports a servo bus's own counters (`counters()`: timeouts, checksum errors, retries, watchdog
   * trips, ...) as `assay_agent_motor_bus_events{kind}`; a no-op for buses without them.
   */
  watchMotorBus(motors: object): void;
  /**
   * Exports which configured coordinator the link is connected to, as
   * `assay_agent_coordinator_connected{address}`: 1 for that one, 0 for the others (all 0 while disconnected).
   */
  watchLink(addresses: readonly string[], connectedTo: () => string | null): void;
}

export function createAgentMetrics(cellId: string): AgentMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ cell: cellId });
  let busCounters: (() => Record<string, number>) | undefined;
  let link: { addresses: readonly string[]; connectedTo: () => string | null } | undefined;
  new Gauge({
    name: "assay_agent_coordinator_connected",
    help: "1 for the coordinator (of coordinatorAddresses) the cell is connected to, 0 for the others",
    labelNames: ["address"],
    registers: [registry],
    collect() {
      if (!link) return;
      const current = link.connectedTo();
      for (const address of link.addresses) this.set({ address }, address === current ? 1 : 0);
    },
  });
  new Gauge({
    name: "assay_agent_motor_bus_events",
    help: "The motor bus driver's own counters since it was opened (timeouts, checksumErrors, retries, txErrors, watchdogTrips, ...)",
    labelNames: ["kind"],
    registers: [registry],
    collect() {
      if (!busCounters) return;
      for (const [kind, value] of Object.entries(busCounters())) if (typeof value === "number") this.set({ kind }, value);
    },
  });
  // How late the process's event loop runs timers (the control loop is one): since the last scrape.
  // Sampled by a 10 ms timer (Node's default): at 1 ms the sampler alone woke an idle cell 1000 times a
  // second (13 ms of CPU a second per cell, 12% of a core for the default fleet's nine idle cells);
  // a block of the loop still shows as the next sample's lateness.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  new Gauge({
    name: "assay_agent_event_loop_delay_seconds",
    help: "Event-loop delay since the previous scrape (quantile 0.5, 0.99, 1): how late any timer, the control loop's included, could have run",
    labelNames: ["quantile"],
    registers: [registry],
    collect() {
      for (const q of [0.5, 0.99]) this.set({ quantile: String(q) }, loopDelay.percentile(q * 100) / 1e9);
      this.set({ quantile: "1" }, loopDelay.max / 1e9);
      loopDelay.reset();
    },
  });
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
    uploadsSetAside: new Counter({
      name: "assay_agent_uploads_set_aside_total",
      help: "Artifacts the coordinator refused for good, moved to <dataDir>/rejected/ instead of uploaded, by reason",
      labelNames: ["reason"],
      registers: [registry],
    }),
    busErrors: new Counter({ name: "assay_agent_bus_errors_total", help: "Failed motor bus or sensor reads and writes", registers: [registry] }),
    episodes: new Counter({ name: "assay_agent_episodes_total", help: "Episodes ended, by outcome (success, failure, interrupted)", labelNames: ["outcome"], registers: [registry] }),
    estopLatencyS: new Histogram({
      name: "assay_agent_estop_latency_seconds",
      help: "E-stop trigger to torque off confirmed by the motor bus",
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1],
      registers: [registry],
    }),
    safetyClamps: new Counter({ name: "assay_agent_safety_clamps_total", help: "Policy targets clamped by the safety envelope, by kind", labelNames: ["kind"], registers: [registry] }),
    protectiveStops: new Counter({ name: "assay_agent_protective_stops_total", help: "Holds with torque on, by cause", labelNames: ["cause"], registers: [registry] }),
    policyStepMisses: new Counter({ name: "assay_agent_policy_step_misses_total", help: "Endpoint-policy replies later than latency_budget_ms (the step held position)", registers: [registry] }),
    watchMotorBus(motors: object) {
      const counters = (motors as { counters?: () => Record<string, number> }).counters;
      if (typeof counters === "function") busCounters = () => counters.call(motors);
    },
    watchLink(addresses, connectedTo) {
      link = { addresses, connectedTo };
    },
  };
}

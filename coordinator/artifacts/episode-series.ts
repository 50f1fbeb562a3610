/**
 * An episode's joint time series read back from its MCAP where it is stored (no local copy), for the
 * console's plots (GET /v1/runs/{run_id}/episodes/{episode_id}/series, docs/api.md):
 * - `measured`: each joint's position on `/joint_states_measured`, one point per control step;
 * - `commanded`: the target sent on `/joint_targets_commanded` at the same step (the policy's action
 *   after the safety envelope), null at a step that commanded nothing (the arm held);
 * - `events`: the `/events` markers (at most MAX_EVENTS).
 *
 * Bounded: at most `maxPoints` points per series, steps picked evenly over the episode (first and
 * last kept), so a long recording costs the browser the same as a short one. Only the steps picked
 * are kept in memory, never the whole recording.
 */
import { RecordingTopic } from "../../protocol/recording/recording-layout.js";
import { openRecordingReader } from "../../protocol/recording/recording-reader.js";
import type { RandomReadable } from "../storage/object-readable.js";

export const DEFAULT_SERIES_POINTS = 2000;
export const MAX_SERIES_POINTS = 5000;
const MAX_EVENTS = 200;

export interface EpisodeSeriesData {
  jointNames: string[];
  steps: number;
  tS: number[];
  measured: Array<Array<number | null>>;
  commanded: Array<Array<number | null>>;
  events: Array<{ t_s: number; name: string }>;
}

/** The step indices kept when `steps` steps are cut down to at most `maxPoints` (evenly spaced, ends kept). */
export function pickedSteps(steps: number, maxPoints: number): Set<number> {
  if (steps <= maxPoints) return new Set(Array.from({ length: steps }, (_, i) => i));
  const picked = new Set<number>();
  for (let k = 0; k < maxPoints; k++) picked.add(Math.round((k * (steps - 1)) / (maxPoints - 1)));
  return picked;
}

const numberOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Reads the series of one recording; throws when it is not a readable MCAP. */
export async function readEpisodeSeries(readable: RandomReadable, maxPoints = DEFAULT_SERIES_POINTS): Promise<EpisodeSeriesData> {
  // Either recording layout (zstd chunks or none): protocol/recording/recording-reader.ts.
  const reader = await openRecordingReader(readable);
  const decoder = new TextDecoder();
  const channel = (topic: string) => [...reader.channelsById.values()].find((c) => c.topic === topic);
  const states = channel(RecordingTopic.jointStates);
  const targets = channel(RecordingTopic.jointTargets);
  const steps = states ? Number(reader.statistics?.channelMessageCounts.get(states.id) ?? 0n) : 0;
  const picked = pickedSteps(steps, maxPoints);
  let jointNames: string[] = [];
  const kept: Array<{ tNs: bigint; position: Array<number | null> }> = [];
  const targetAt = new Map<bigint, Array<number | null>>();
  let firstNs: bigint | undefined;
  let step = 0;
  const keptTimes = new Set<bigint>();
  let lastStateNs = -1n;
  const topics = [states?.topic, targets?.topic].filter((t): t is string => t !== undefined);
  for await (const message of topics.length > 0 ? reader.readMessages({ topics, validateCrcs: false }) : []) {
    const body = JSON.parse(decoder.decode(message.data)) as { name?: unknown; position?: unknown };
    const position = Array.isArray(body.position) ? body.position.map(numberOrNull) : [];
    if (message.channelId === states?.id) {
      firstNs ??= message.logTime;
      if (jointNames.length === 0 && Array.isArray(body.name)) jointNames = body.name.map(String).slice(0, 64);
      if (picked.has(step)) {
        kept.push({ tNs: message.logTime, position });
        keptTimes.add(message.logTime);
      }
      step += 1;
      // The agent writes a step's target at its state's log time: targets of steps not kept are dropped as they pass.
      for (const t of targetAt.keys()) if (t < message.logTime && !keptTimes.has(t)) targetAt.delete(t);
      lastStateNs = message.logTime;
    } else if (keptTimes.has(message.logTime) || message.logTime > lastStateNs) {
      targetAt.set(message.logTime, position);
    }
  }
  const joints = jointNames.length || Math.max(0, ...kept.map((k) => k.position.length));
  const measured = Array.from({ length: joints }, (_, j) => kept.map((k) => k.position[j] ?? null));
  const commanded = Array.from({ length: joints }, (_, j) => kept.map((k) => targetAt.get(k.tNs)?.[j] ?? null));
  const events: EpisodeSeriesData["events"] = [];
  const eventsChannel = channel(RecordingTopic.events);
  if (eventsChannel) {
    for await (const message of reader.readMessages({ topics: [RecordingTopic.events], validateCrcs: false })) {
      if (events.length >= MAX_EVENTS) break;
      const body = JSON.parse(decoder.decode(message.data)) as { t_s?: unknown; name?: unknown };
      const tS = numberOrNull(body.t_s);
      if (tS !== null && typeof body.name === "string") events.push({ t_s: tS, name: body.name.slice(0, 100) });
    }
  }
  return {
    jointNames: jointNames.length > 0 ? jointNames : Array.from({ length: joints }, (_, j) => `joint_${j}`),
    steps,
    tS: kept.map((k) => Number(k.tNs - (firstNs ?? k.tNs)) / 1e9),
    measured,
    commanded,
    events,
  };
}

/**
 * rosbridge v2 wire shapes the simulated server reads and writes (ROSBRIDGE_PROTOCOL.md in
 * RobotWebTools/rosbridge_suite): JSON objects with an `op`, an optional `id` echoed in related
 * replies, `status` messages filtered by the client's `set_level`.
 */

export type StatusLevel = "none" | "error" | "warning" | "info";

const LEVEL_RANK: Record<StatusLevel, number> = { none: 0, error: 1, warning: 2, info: 3 };

export function isStatusLevel(value: unknown): value is StatusLevel {
  return typeof value === "string" && value in LEVEL_RANK;
}

/** Whether a status of `level` reaches a client that asked for `clientLevel` (default "error"). */
export function statusPasses(level: StatusLevel, clientLevel: StatusLevel): boolean {
  return level !== "none" && LEVEL_RANK[level] <= LEVEL_RANK[clientLevel];
}

export interface StatusMessage {
  op: "status";
  id?: string;
  level: StatusLevel;
  msg: string;
}

export function statusMessage(level: StatusLevel, msg: string, id?: string): StatusMessage {
  return id === undefined ? { op: "status", level, msg } : { op: "status", id, level, msg };
}

/** "sensor_msgs/msg/JointState" and "sensor_msgs/JointState" name the same type (ROS 2 and ROS 1 spelling). */
export function sameRosType(a: string, b: string): boolean {
  const norm = (t: string): string => t.replace("/msg/", "/").replace("/srv/", "/");
  return norm(a) === norm(b);
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** rosbridge ids may be strings or integers; they are echoed back as given. */
export function idOf(message: Json): string | undefined {
  const id = message.id;
  return typeof id === "string" ? id : typeof id === "number" ? String(id) : undefined;
}

/** Checks a std_msgs/Float64MultiArray of `length` finite values; returns the data or a reason. */
export function float64Data(msg: unknown, length: number): number[] | string {
  if (!isObject(msg) || !Array.isArray(msg.data)) return `Float64MultiArray needs a "data" array; got ${JSON.stringify(msg)}`;
  const data = msg.data;
  if (data.length !== length || !data.every((v) => typeof v === "number" && Number.isFinite(v))) {
    return `Float64MultiArray.data must be ${length} finite numbers; got ${JSON.stringify(data)}`;
  }
  return data as number[];
}

/** A rosbridge `fragment` reassembler (section 3.1.1): returns the whole JSON text once every part is in. */
export class FragmentBuffer {
  private readonly parts = new Map<string, { total: number; data: string[]; received: number }>();

  add(message: Json): string | null | "invalid" {
    const { data, num, total } = message;
    const id = idOf(message);
    if (id === undefined || typeof data !== "string" || !Number.isInteger(num) || !Number.isInteger(total) || (total as number) < 1) return "invalid";
    const entry = this.parts.get(id) ?? { total: total as number, data: [], received: 0 };
    this.parts.set(id, entry);
    if ((num as number) < 0 || (num as number) >= entry.total) return "invalid";
    if (entry.data[num as number] === undefined) {
      entry.data[num as number] = data;
      entry.received++;
    }
    if (entry.received < entry.total) return null;
    this.parts.delete(id);
    return entry.data.join("");
  }
}

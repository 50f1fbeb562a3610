/**
 * A simulated instrument fault: wraps a cell's gripper sensor, F/T sensor or mocap source so that,
 * switched off, every read fails the way a dead device does (a stale NatNet stream, a silent F/T
 * sensor), and switched on it answers again. Driven by the sim-cell control channel
 * (`POST /instruments/<kind>/off|on`, `npm run fleet -- instrument <cell> <kind> off|on`).
 */
import type { GripperSensor, MocapSource, WristForceTorque } from "../../cell-agent/hardware/types.js";

/** Instrument kinds a fault can switch off. */
export const SWITCHABLE_INSTRUMENTS = ["mocap", "gripper_state", "ft_wrist"] as const;
export type SwitchableInstrument = (typeof SWITCHABLE_INSTRUMENTS)[number];

export class InstrumentSwitches {
  private readonly off = new Set<SwitchableInstrument>();

  set(kind: SwitchableInstrument, on: boolean): void {
    if (on) this.off.delete(kind);
    else this.off.add(kind);
  }

  isOn(kind: SwitchableInstrument): boolean {
    return !this.off.has(kind);
  }

  private check(kind: SwitchableInstrument): void {
    if (this.off.has(kind)) throw new Error(`simulated fault: ${kind} switched off (it sends nothing)`);
  }

  gripper(inner: GripperSensor): GripperSensor {
    return { read: async () => (this.check("gripper_state"), inner.read()) };
  }

  wristFt(inner: WristForceTorque): WristForceTorque {
    return { read: async () => (this.check("ft_wrist"), inner.read()) };
  }

  /** Keeps the source's other methods (close) by delegating readPoses only. */
  mocap<T extends MocapSource>(inner: T): T {
    return new Proxy(inner, {
      get: (target, key, receiver) => {
        if (key === "readPoses") return async () => (this.check("mocap"), target.readPoses());
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }
}

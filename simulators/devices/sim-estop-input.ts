/** A simulated e-stop button: `press()` and `release()` stand in for a person at the cell. */
import type { EstopInput } from "../../cell-agent/hardware/types.js";

export class SimEstopInput implements EstopInput {
  private pressed = false;
  private readonly listeners = new Set<() => void>();

  isPressed(): boolean {
    return this.pressed;
  }

  onTrigger(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Presses the button; listeners fire once per press (not again while held down). */
  press(): void {
    if (this.pressed) return;
    this.pressed = true;
    for (const listener of [...this.listeners]) listener();
  }

  release(): void {
    this.pressed = false;
  }
}

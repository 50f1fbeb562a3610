/**
 * Dead-man line on a serial port's DTR or RTS output (a USB-serial adapter's modem line driving the
 * watchdog relay's trigger input through a transistor or opto-coupler), set with serialport's
 * `port.set({dtr})` / `port.set({rts})`. The port carries no data.
 */
import { SerialPort } from "serialport";
import type { DeadmanLine } from "./deadman-output.js";

/** The part of a serialport `SerialPort` the line uses (tests inject a fake). */
export interface ModemLinePort {
  set(options: { dtr?: boolean; rts?: boolean }, callback: (error: Error | null) => void): unknown;
  close(callback?: (error?: Error | null) => void): void;
}

export function serialDeadmanLine(port: ModemLinePort, path: string, line: "dtr" | "rts"): DeadmanLine {
  return {
    describe: `${line.toUpperCase()} of ${path}`,
    set: (high) => new Promise<void>((resolve, reject) => port.set({ [line]: high }, (error) => (error ? reject(error) : resolve()))),
    close: () => new Promise<void>((resolve) => port.close(() => resolve())),
  };
}

/** Opens the serial device and returns its DTR or RTS line. */
export async function openSerialDeadmanLine(path: string, line: "dtr" | "rts"): Promise<DeadmanLine> {
  const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(new Error(`cannot open dead-man output ${path}: ${error.message}`)) : resolve())));
  return serialDeadmanLine(port, path, line);
}

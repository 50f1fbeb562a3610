/**
 * E-stop contact on a serial port's modem-status line (CTS, DSR or DCD), polled with serialport's
 * `get()`. Wiring: the normally-closed e-stop contact between RTS (driven high by the agent) and the
 * chosen input line, so an intact, released button reads "asserted" and a pressed button or a cut
 * wire reads "deasserted" (pressed).
 */
import { SerialPort } from "serialport";
import type { EstopConfig } from "../../config.js";
import { PolledEstop } from "./polled-estop.js";

type SerialEstopConfig = Extract<EstopConfig, { kind: "serial" }>;

/** The part of a serialport SerialPort this input uses (SerialPortMock in tests). */
export interface ModemLinePort {
  get(callback: (error: Error | null, status?: { cts: boolean; dsr: boolean; dcd: boolean }) => void): void;
  set(options: { rts?: boolean; dtr?: boolean }, callback: (error: Error | null) => void): void;
  close(callback?: (error?: Error | null) => void): void;
}

function call<T>(fn: (done: (error: Error | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value as T))));
}

/** Opens the port (or uses `port`), drives RTS and DTR high, and polls the line. */
export async function openSerialEstop(config: SerialEstopConfig, log?: (line: string) => void, port?: ModemLinePort): Promise<PolledEstop> {
  let opened = port;
  if (!opened) {
    const serial = new SerialPort({ path: config.path, baudRate: 9600, autoOpen: false });
    await call<void>((done) => serial.open((error) => done(error ?? null)));
    opened = serial as unknown as ModemLinePort;
  }
  const line = opened;
  await call<void>((done) => line.set({ rts: true, dtr: true }, done));
  const read = async (): Promise<boolean> => {
    const status = await call<{ cts: boolean; dsr: boolean; dcd: boolean }>((done) => line.get(done));
    const asserted = status[config.line];
    return config.pressedWhen === "asserted" ? asserted : !asserted;
  };
  return PolledEstop.start({
    read,
    pollMs: config.pollMs,
    describe: `${config.line.toUpperCase()} of ${config.path}`,
    log,
    release: () => new Promise<void>((resolve) => line.close(() => resolve())),
  });
}

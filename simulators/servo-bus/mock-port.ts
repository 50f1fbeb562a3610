/**
 * Wires a `ServoBusEmulator` to serialport's `SerialPortMock`, so `SerialServoBus` talks to emulated
 * servos through the real serialport stream API: every write the host makes reaches the emulator,
 * every reply is fed back with the mock binding's `emitData`.
 */
import { SerialPortMock } from "serialport";
import { ServoBusEmulator, ServoEmulatorOptions } from "./servo-emulator.js";

/** The part of @serialport/binding-mock's MockPortBinding used here (its types do not resolve under NodeNext). */
interface MockBindingPort {
  isOpen: boolean;
  write(buffer: Buffer): Promise<void>;
  emitData(data: Buffer): void;
}

export interface MockServoPort {
  /** Open, ready to hand to `SerialServoBus.open({ port })`. */
  port: SerialPortMock;
  emulator: ServoBusEmulator;
  path: string;
  /** Bytes the host wrote, in order (for byte-level assertions). */
  written: Buffer[];
  close(): Promise<void>;
}

let serial = 0;

/**
 * Creates a mock serial device with the emulator behind it. `baudRate` is only recorded; `echo`
 * makes the port echo every write back, like some half-duplex adapters.
 */
export async function createMockServoPort(options: ServoEmulatorOptions & { baudRate?: number; echo?: boolean }): Promise<MockServoPort> {
  const { baudRate = 1_000_000, echo = false, ...emulatorOptions } = options;
  const emulator = new ServoBusEmulator(emulatorOptions);
  const path = `/dev/assay-servo-mock-${process.pid}-${++serial}`;
  SerialPortMock.binding.createPort(path, { echo: false, record: false });
  const port = new SerialPortMock({ path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
  const binding = (port as unknown as { port: MockBindingPort }).port;
  const written: Buffer[] = [];
  const write = binding.write.bind(binding);
  binding.write = async (buffer: Buffer): Promise<void> => {
    await write(buffer);
    written.push(Buffer.from(buffer));
    // A real echoing adapter returns our bytes as they go out, before any servo can answer.
    if (echo) binding.emitData(Buffer.from(buffer));
    emulator.write(new Uint8Array(buffer));
  };
  const unsubscribe = emulator.onData((bytes) => {
    if (binding.isOpen) binding.emitData(Buffer.from(bytes));
  });
  return {
    port,
    emulator,
    path,
    written,
    async close() {
      unsubscribe();
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    },
  };
}

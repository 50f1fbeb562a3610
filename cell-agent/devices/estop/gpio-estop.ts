/**
 * E-stop contact on a GPIO line read through the sysfs GPIO interface (`/sys/class/gpio`): the
 * line's global number is the chip's `base` plus `line`; the agent exports it, sets it to input and
 * polls its `value` file. Wiring: normally-closed contact to ground with a pull-up, so released
 * reads 0 and pressed (or a cut wire) reads 1 (`pressedWhen: "high"`, the default).
 *
 * NOTE: sysfs GPIO is deprecated on newer kernels but still present on Debian/Ubuntu cell PCs and
 * Raspberry Pi OS; the agent's user needs write access to /sys/class/gpio/export (group `gpio`).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EstopConfig } from "../../config.js";
import { PolledEstop } from "./polled-estop.js";

type GpioEstopConfig = Extract<EstopConfig, { kind: "gpio" }>;

/** Global sysfs number of the configured line; throws with the file it could not read. */
export function gpioNumber(config: GpioEstopConfig, sysfsRoot = "/sys/class/gpio"): number {
  const basePath = join(sysfsRoot, config.chip, "base");
  let base: number;
  try {
    base = Number(readFileSync(basePath, "utf8").trim());
  } catch (error) {
    throw new Error(`GPIO chip ${config.chip} not found (${basePath}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return base + config.line;
}

/** Exports the line if needed, makes it an input, and polls it. */
export async function openGpioEstop(config: GpioEstopConfig, log?: (line: string) => void, sysfsRoot = "/sys/class/gpio"): Promise<PolledEstop> {
  const number = gpioNumber(config, sysfsRoot);
  const dir = join(sysfsRoot, `gpio${number}`);
  if (!existsSync(dir)) writeFileSync(join(sysfsRoot, "export"), String(number));
  try {
    writeFileSync(join(dir, "direction"), "in");
  } catch {
    // Some boards fix the direction; reading still works.
  }
  const fd = openSync(join(dir, "value"), "r");
  const buffer = Buffer.alloc(2);
  const read = (): boolean => {
    // sysfs value files must be re-read from offset 0 for each fresh reading.
    const bytes = readSync(fd, buffer, 0, 1, 0);
    if (bytes < 1) throw new Error(`empty read from ${dir}/value`);
    const high = buffer[0] === 0x31; // "1"
    return config.pressedWhen === "high" ? high : !high;
  };
  return PolledEstop.start({ read, pollMs: config.pollMs, describe: `GPIO ${config.chip} line ${config.line}`, log, release: () => closeSync(fd) });
}

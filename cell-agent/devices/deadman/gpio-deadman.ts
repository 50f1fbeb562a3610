/**
 * Dead-man line on a GPIO output through the sysfs GPIO interface (`/sys/class/gpio`), as the GPIO
 * e-stop input reads its line: the global number is the chip's `base` plus `line`; the agent
 * exports it, sets it to output and writes its `value` file.
 */
import { closeSync, existsSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { gpioNumber } from "../estop/gpio-estop.js";
import type { DeadmanLine } from "./deadman-output.js";

export function openGpioDeadmanLine(chip: string, line: number, sysfsRoot = "/sys/class/gpio"): DeadmanLine {
  const number = gpioNumber({ kind: "gpio", chip, line, pressedWhen: "high", pollMs: 2 }, sysfsRoot);
  const dir = join(sysfsRoot, `gpio${number}`);
  if (!existsSync(dir)) writeFileSync(join(sysfsRoot, "export"), String(number));
  writeFileSync(join(dir, "direction"), "low");
  const fd = openSync(join(dir, "value"), "w");
  return {
    describe: `GPIO ${chip} line ${line}`,
    set: async (high) => {
      writeSync(fd, high ? "1" : "0", 0);
    },
    close: async () => closeSync(fd),
  };
}

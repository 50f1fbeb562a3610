/**
 * Regenerates protocol/gen/ from protocol/cell.proto with buf and ts-proto, both from npm:
 * no network, no protoc on the machine. Run with `npm run proto`; the output is committed
 * and never edited by hand.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const protocolDir = join(root, "protocol");
rmSync(join(protocolDir, "gen"), { recursive: true, force: true });
execFileSync(join(root, "node_modules", ".bin", "buf"), ["generate"], { cwd: protocolDir, stdio: "inherit" });
console.log("protocol/gen regenerated from protocol/cell.proto");

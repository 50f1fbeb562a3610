/**
 * A fake OCI engine for tests on machines without docker: exactly the part of the `docker` CLI the
 * container policy runtime and the doctor use, read from the command line as docker reads it (an
 * unknown flag fails with exit 125, as docker's does). `test/support/fake-engine-bin/docker` runs this
 * file (a test puts that folder first on PATH; linked as `podman`, it plays podman's CLI, which takes
 * the same commands). Every call is its own process, so the engine's state
 * lives in the folder $ASSAY_FAKE_ENGINE_DIR:
 *
 *   engine.mjs               this file bundled to plain JavaScript (fake-engine-bundle.ts), run when present
 *   images.json              image -> what its container does (FakeImage)
 *   containers/<name>.json   one per container (FakeContainer)
 *   runs.jsonl               every container ever started, one FakeContainer a line (kept after rm)
 *   daemon-down              present: every command fails as docker does with no daemon
 *
 *   run --detach --pull never --name N (--publish 127.0.0.1:H:C | --network NET) [--memory M]
 *       [--gpus all|device=N | --device D]... [--env K=V]... IMAGE
 *   network inspect NET / network create --internal NET   (networks.json)
 *   inspect --format {{(index .NetworkSettings.Networks "NET").IPAddress}} NAME
 *   rm -f NAME...            kills the container's process group and forgets it
 *   ps [--all] [--filter name=X] [--format {{.Names}}]
 *   logs --tail N NAME       the last N lines the container's process printed
 *   version --format {{json .}}
 *   image inspect [--format {{.Id}}] IMAGE...
 *
 * A "serve" image's container is a real process: the JSON-protocol expert policy server of
 * simulators/policies/endpoint-server.ts, listening on 127.0.0.1:H, the published host port.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * What an image's container does: serve the expert for a robot model (JSON wire, or openpi's with
 * the DROID keys in chunks of 4), print a line and never listen, or print a line and exit.
 */
export type FakeImage = { serve: string; answersReset?: boolean } | { openpi: string } | { mute: string } | { crash: string };

export interface FakeContainer {
  name: string;
  image: string;
  /** Process id of the container's process (leader of its own process group). */
  pid: number;
  /** The published port; null on a network of its own (then `ip` is its address there). */
  publish: { hostIp: string; hostPort: number; containerPort: number } | null;
  /** `--network`, or null (the default bridge). */
  network: string | null;
  /** The container's address on `network`: a 127.77.x.y loopback address of its own, serving on the image's port 8000. */
  ip: string | null;
  memory: string | null;
  env: Record<string, string>;
  gpus: string | null;
  devices: string[];
  pull: string | null;
}

export const FAKE_ENGINE_VERSION = "27.5.1-fake";
export const DAEMON_DOWN = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?";

/** Sets up a state folder: the images this engine has. */
export function writeFakeEngineImages(dir: string, images: Record<string, FakeImage>): void {
  mkdirSync(join(dir, "containers"), { recursive: true });
  writeFileSync(join(dir, "images.json"), JSON.stringify(images));
}

/** The containers the engine knows, as its state folder says. */
export function fakeContainers(dir: string): FakeContainer[] {
  const folder = join(dir, "containers");
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter((f) => f.endsWith(".json")).map((f) => JSON.parse(readFileSync(join(folder, f), "utf8")) as FakeContainer);
}

/** Every container the engine started, removed or not, in order. */
export function fakeRuns(dir: string): FakeContainer[] {
  const file = join(dir, "runs.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as FakeContainer);
}

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

class Usage extends Error {}

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

/** Splits docker-style arguments: `--flag value`, `--flag=value`, boolean flags, then positionals. */
function parse(args: string[], valued: string[], booleans: string[]): { flags: Map<string, string[]>; rest: string[] } {
  const flags = new Map<string, string[]>();
  let i = 0;
  for (; i < args.length && args[i].startsWith("-"); i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    if (booleans.includes(flag)) {
      flags.set(flag, ["true"]);
    } else if (valued.includes(flag)) {
      const value = inline ?? args[++i];
      if (value === undefined) throw new Usage(`flag needs an argument: ${flag}`);
      flags.set(flag, [...(flags.get(flag) ?? []), value]);
    } else {
      throw new Usage(`unknown flag: ${flag}`);
    }
  }
  return { flags, rest: args.slice(i) };
}

function stateDir(): string {
  const dir = process.env.ASSAY_FAKE_ENGINE_DIR;
  if (!dir) fail("fake engine: set ASSAY_FAKE_ENGINE_DIR to its state folder", 1);
  return dir;
}

const containerFile = (dir: string, name: string) => join(dir, "containers", `${name}.json`);

function run(dir: string, args: string[]): void {
  const { flags, rest } = parse(args, ["--name", "--publish", "--gpus", "--device", "--env", "--pull", "--network", "--memory"], ["--detach"]);
  const image = rest[0];
  if (!image) throw new Usage(`"docker run" requires at least 1 argument.`);
  if (rest.length > 1) throw new Usage(`the fake engine runs an image's own command only; got ${rest.slice(1).join(" ")}`);
  if (!flags.has("--detach")) throw new Usage("the fake engine runs detached containers only (--detach)");
  const name = flags.get("--name")?.at(-1) ?? `fake_${randomBytes(4).toString("hex")}`;
  const network = flags.get("--network")?.at(-1) ?? null;
  const publish = (flags.get("--publish") ?? []).map((p) => p.match(/^(\d+\.\d+\.\d+\.\d+):(\d+):(\d+)$/));
  if (network === null && (publish.length !== 1 || !publish[0])) throw new Usage(`the fake engine publishes exactly one port as ip:hostPort:containerPort; got ${JSON.stringify(flags.get("--publish"))}`);
  if (network !== null && publish.length) throw new Usage("the fake engine publishes no port on a --network of its own: reach the container at its address");
  if (network !== null && !fakeNetworks(dir).includes(network)) fail(`docker: Error response from daemon: network ${network} not found.`, 125);
  const images = JSON.parse(readFileSync(join(dir, "images.json"), "utf8")) as Record<string, FakeImage>;
  const behaviour = images[image];
  if (!behaviour) fail(`docker: Error response from daemon: No such image: ${image}.\nSee 'docker run --help'.`, 125);
  if (existsSync(containerFile(dir, name))) {
    fail(`docker: Error response from daemon: Conflict. The container name "/${name}" is already in use. You have to remove (or rename) that container to be able to reuse that name.`, 125);
  }
  const env = Object.fromEntries((flags.get("--env") ?? []).map((e) => e.split(/=(.*)/s, 2) as [string, string]));
  const ip = network !== null ? `127.77.${randomBytes(1)[0]}.${2 + (randomBytes(1)[0] % 250)}` : null;
  const [, hostIp, hostPort, containerPort] = publish[0] ?? [null, ip!, "8000", "8000"];
  const log = openSync(join(dir, `${name}.log`), "a");
  // The container's process runs this file's source with tsx (from the repository root, where
  // fake-engine-bin/docker runs), also when the engine's commands run from the bundle: the servers it
  // starts read files that sit beside their modules.
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/fake-container-engine.ts", "container", JSON.stringify(behaviour), hostIp, hostPort], {
    detached: true,
    stdio: ["ignore", log, log],
    env: { ...process.env, ...env },
  });
  child.unref();
  const container: FakeContainer = {
    name, image, pid: child.pid!, publish: network === null ? { hostIp, hostPort: Number(hostPort), containerPort: Number(containerPort) } : null, env,
    network, ip, memory: flags.get("--memory")?.at(-1) ?? null,
    gpus: flags.get("--gpus")?.at(-1) ?? null, devices: flags.get("--device") ?? [], pull: flags.get("--pull")?.at(-1) ?? null,
  };
  writeFileSync(containerFile(dir, name), JSON.stringify(container));
  appendFileSync(join(dir, "runs.jsonl"), `${JSON.stringify(container)}\n`);
  process.stdout.write(`${createHash("sha256").update(name).digest("hex")}\n`);
}

async function rm(dir: string, args: string[]): Promise<void> {
  const { flags, rest } = parse(args, [], ["-f", "--force"]);
  if (!flags.has("-f") && !flags.has("--force")) throw new Usage("the fake engine removes with -f only");
  let missing = false;
  for (const name of rest) {
    const file = containerFile(dir, name);
    if (!existsSync(file)) {
      process.stderr.write(`Error response from daemon: No such container: ${name}\n`);
      missing = true;
      continue;
    }
    const { pid } = JSON.parse(readFileSync(file, "utf8")) as FakeContainer;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already exited
    }
    // Like docker, return once the container's processes are gone.
    while (processAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 10));
    rmSync(file);
    process.stdout.write(`${name}\n`);
  }
  if (missing) process.exit(1);
}

function ps(dir: string, args: string[]): void {
  const { flags, rest } = parse(args, ["--filter", "--format"], ["--all", "-a"]);
  if (rest.length) throw new Usage(`"docker ps" accepts no arguments.`);
  const format = flags.get("--format")?.at(-1);
  if (format !== undefined && format !== "{{.Names}}") throw new Usage(`the fake engine formats ps as {{.Names}} only; got ${format}`);
  const patterns = (flags.get("--filter") ?? []).map((f) => {
    const [key, value] = f.split(/=(.*)/s, 2);
    if (key !== "name") throw new Usage(`the fake engine filters ps by name only; got ${f}`);
    return new RegExp(value);
  });
  const all = flags.has("--all") || flags.has("-a");
  const names = fakeContainers(dir)
    .filter((c) => (all || processAlive(c.pid)) && patterns.every((p) => p.test(c.name)))
    .map((c) => c.name);
  if (format === undefined) process.stdout.write("CONTAINER ID   IMAGE   NAMES\n");
  for (const name of names) process.stdout.write(`${name}\n`);
}

function logs(dir: string, args: string[]): void {
  const { flags, rest } = parse(args, ["--tail", "-n"], []);
  const tail = Number((flags.get("--tail") ?? flags.get("-n") ?? ["all"]).at(-1));
  if (rest.length !== 1) throw new Usage(`"docker logs" requires exactly 1 argument.`);
  if (!existsSync(containerFile(dir, rest[0]))) fail(`Error response from daemon: No such container: ${rest[0]}`, 1);
  const lines = readFileSync(join(dir, `${rest[0]}.log`), "utf8").split("\n").filter((l) => l !== "");
  for (const line of Number.isFinite(tail) ? lines.slice(-tail) : lines) process.stdout.write(`${line}\n`);
}

function version(args: string[]): void {
  const { flags, rest } = parse(args, ["--format", "-f"], []);
  if (rest.length || (flags.get("--format") ?? flags.get("-f"))?.at(-1) !== "{{json .}}") throw new Usage("the fake engine prints its version as --format {{json .}} only");
  process.stdout.write(`${JSON.stringify({ Client: { Version: FAKE_ENGINE_VERSION }, Server: { Version: FAKE_ENGINE_VERSION } })}\n`);
}

/** The id the fake engine gives an image. */
export const fakeImageId = (image: string) => `sha256:${createHash("sha256").update(image).digest("hex")}`;
/** The registry digest the fake engine gives an image: its name without the tag, @ a digest of it. */
export const fakeRepoDigest = (image: string) => `${image.replace(/:[^/:]*$/, "")}@sha256:${createHash("sha256").update(`repo:${image}`).digest("hex")}`;

/** The networks `network create` made. */
export function fakeNetworks(dir: string): string[] {
  const file = join(dir, "networks.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as string[]) : [];
}

function network(dir: string, args: string[]): void {
  const [sub, ...rest] = args;
  if (sub === "inspect") {
    const missing = rest.filter((n) => !fakeNetworks(dir).includes(n));
    if (missing.length || !rest.length) fail(`Error response from daemon: network ${missing[0] ?? ""} not found`, 1);
    process.stdout.write(`${JSON.stringify(rest.map((n) => ({ Name: n, Internal: true })))}\n`);
    return;
  }
  if (sub === "create") {
    const { flags, rest: names } = parse(rest, [], ["--internal"]);
    if (!flags.has("--internal")) throw new Usage("the fake engine creates --internal networks only");
    if (names.length !== 1) throw new Usage(`"docker network create" requires exactly 1 argument.`);
    if (fakeNetworks(dir).includes(names[0])) fail(`Error response from daemon: network with name ${names[0]} already exists`, 1);
    writeFileSync(join(dir, "networks.json"), JSON.stringify([...fakeNetworks(dir), names[0]]));
    process.stdout.write(`${createHash("sha256").update(names[0]).digest("hex")}\n`);
    return;
  }
  throw new Usage(`the fake engine does not implement "network ${sub}"`);
}

function inspect(dir: string, args: string[]): void {
  const { flags, rest } = parse(args, ["--format", "-f"], []);
  const format = (flags.get("--format") ?? flags.get("-f"))?.at(-1) ?? "";
  const match = format.match(/^\{\{\(index \.NetworkSettings\.Networks "([^"]+)"\)\.IPAddress\}\}$/);
  if (!match || rest.length !== 1) throw new Usage(`the fake engine inspects one container's address on a network only; got ${args.join(" ")}`);
  if (!existsSync(containerFile(dir, rest[0]))) fail(`Error: No such object: ${rest[0]}`, 1);
  const c = JSON.parse(readFileSync(containerFile(dir, rest[0]), "utf8")) as FakeContainer;
  // docker's index of a network the container is not on fails the template.
  if (c.network !== match[1]) fail(`template parsing error: template: :1:3: executing "" at <index .NetworkSettings.Networks "${match[1]}">: map has no entry for key "${match[1]}"`, 1);
  process.stdout.write(`${c.ip}\n`);
}

function imageInspect(dir: string, args: string[]): void {
  const { flags, rest } = parse(args, ["--format", "-f"], []);
  if (!rest.length) throw new Usage(`"docker image inspect" requires at least 1 argument.`);
  const format = (flags.get("--format") ?? flags.get("-f"))?.at(-1) ?? "{{.Id}}";
  if (format !== "{{.Id}}" && format !== "{{.Id}} {{json .RepoDigests}}") throw new Usage(`the fake engine formats image inspect as {{.Id}} [{{json .RepoDigests}}] only; got ${format}`);
  const images = JSON.parse(readFileSync(join(dir, "images.json"), "utf8")) as Record<string, FakeImage>;
  const missing = rest.filter((image) => !images[image]);
  for (const image of rest) {
    if (!images[image]) continue;
    const digests = format === "{{.Id}}" ? "" : ` ${JSON.stringify([fakeRepoDigest(image)])}`;
    process.stdout.write(`${fakeImageId(image)}${digests}\n`);
  }
  if (missing.length) fail(missing.map((image) => `Error response from daemon: No such image: ${image}`).join("\n"), 1);
}

/** The container's own process. */
async function container(behaviour: FakeImage, hostIp: string, hostPort: number): Promise<void> {
  if ("crash" in behaviour) fail(behaviour.crash, 1);
  if ("mute" in behaviour) {
    console.log(behaviour.mute);
    setInterval(() => undefined, 60_000);
    return;
  }
  if (!hostIp.startsWith("127.")) fail(`the fake engine serves on loopback only; got ${hostIp}`, 1);
  if ("openpi" in behaviour) {
    const { startOpenpiServer } = await import("./openpi-server.js");
    await startOpenpiServer({ model: behaviour.openpi, host: hostIp, port: hostPort, chunk: 4 });
    console.log(`openpi expert policy for ${behaviour.openpi} serving on ${hostIp}:${hostPort}`);
    return;
  }
  const { startEndpointPolicyServer } = await import("../../simulators/policies/endpoint-server.js");
  await startEndpointPolicyServer({ model: behaviour.serve, port: hostPort, host: hostIp, answersReset: behaviour.answersReset ?? true });
  console.log(`expert policy for ${behaviour.serve} serving on ${hostIp}:${hostPort}`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === "container") return container(JSON.parse(args[0]) as FakeImage, args[1], Number(args[2]));
  const dir = stateDir();
  if (existsSync(join(dir, "daemon-down"))) {
    if (command === "version") process.stdout.write(`${JSON.stringify({ Client: { Version: FAKE_ENGINE_VERSION }, Server: null })}\n`);
    fail(command === "run" ? `docker: ${DAEMON_DOWN}` : DAEMON_DOWN, command === "run" ? 125 : 1);
  }
  try {
    if (command === "run") run(dir, args);
    else if (command === "rm") await rm(dir, args);
    else if (command === "ps") ps(dir, args);
    else if (command === "logs") logs(dir, args);
    else if (command === "version") version(args);
    else if (command === "image" && args[0] === "inspect") imageInspect(dir, args.slice(1));
    else if (command === "network") network(dir, args);
    else if (command === "inspect") inspect(dir, args);
    else throw new Usage(`the fake engine does not implement "${argv.join(" ")}"`);
  } catch (error) {
    if (error instanceof Usage) fail(`${error.message}\nSee 'docker ${command} --help'.`, 125);
    throw error;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: Error) => fail(`fake engine: ${error.stack ?? error.message}`, 1));
}

/**
 * The container policy runtime of a real cell against a fake `docker` (test/support/fake-engine-bin,
 * put first on PATH): real engine processes, real policy server processes on the published loopback
 * port, real WebSocket traffic through the endpoint runtime. Also the policies config and the
 * doctor's container probes.
 */
import { encodeJpegSync } from "../../simulators/render/jpeg-codec.js";
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compileAgentConfig } from "../../cell-agent/config.js";
import { realProbes } from "../../cell-agent/doctor/probes.js";
import type { Observation } from "../../cell-agent/hardware/types.js";
import { policyRuntimeFor } from "../../cell-agent/hardware-factory.js";
import { ContainerPolicyRuntime, gpuArgs, type ContainerImage } from "../../cell-agent/policy/container-runtime.js";
import { EndpointPolicyRuntime } from "../../cell-agent/policy/endpoint-runtime.js";
import { startEndpointPolicyServer } from "../../simulators/policies/endpoint-server.js";
import { ExpertPolicy } from "../../simulators/policies/expert-policy.js";
import { embodimentFor } from "../../simulators/world/embodiments.js";
import { FAKE_ENGINE_VERSION, fakeContainers, fakeImageId, fakeNetworks, fakeRepoDigest, fakeRuns, processAlive, writeFakeEngineImages } from "../support/fake-container-engine.js";
import { bundleFakeEngine } from "../support/fake-engine-bundle.js";

const FAKE_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "../support/fake-engine-bin");
const EXPERT = "assay/expert-picker:1";
const MUTE = "assay/never-listens:1";
const CRASH = "assay/crashes:1";
const OPENPI = "assay/openpi-picker:1";
const OLD_SERVER = "assay/no-reset-picker:1";
const ROBOT = { model: "so101", dof: 6 };

const image = (name: string, extra: Partial<ContainerImage> = {}): ContainerImage => ({ image: name, protocol: "json", port: 8000, env: {}, ...extra });
const containerPolicy = (name: string) => ({
  type: "container", image: name, action_space: { type: "joint_position", dim: 6 }, observation_contract: { state: ["joint_positions"] },
});

describe("container policy runtime (fake docker)", function () {
  this.timeout(30_000);
  let dir: string;
  const saved = { path: process.env.PATH, dir: process.env.ASSAY_FAKE_ENGINE_DIR };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-fake-engine-"));
    await bundleFakeEngine(dir);
    writeFakeEngineImages(dir, { [EXPERT]: { serve: "so101" }, [OPENPI]: { openpi: "so101" }, [MUTE]: { mute: "loading checkpoint from the hub" }, [CRASH]: { crash: "policy server: no checkpoint in /models" }, [OLD_SERVER]: { serve: "so101", answersReset: false } });
    process.env.PATH = `${FAKE_BIN}${delimiter}${saved.path}`;
    process.env.ASSAY_FAKE_ENGINE_DIR = dir;
  });

  after(() => {
    // Whatever a failed test left running.
    for (const c of fakeContainers(dir)) {
      try {
        process.kill(-c.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    process.env.PATH = saved.path;
    if (saved.dir === undefined) delete process.env.ASSAY_FAKE_ENGINE_DIR;
    else process.env.ASSAY_FAKE_ENGINE_DIR = saved.dir;
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a configured image in a loopback-only container, acts through it as the expert would, and removes it on close", async () => {
    const lines: string[] = [];
    const runtime = new ContainerPolicyRuntime({
      images: [image(EXPERT, { env: { POLICY_SEED: "7" } })], gpus: true, network: "published", startTimeoutMs: 20_000, latencyBudgetMs: 5000, log: (l) => lines.push(l),
    });
    assert.deepEqual(runtime.available(), [EXPERT]);
    const session = await runtime.start(containerPolicy(EXPERT), ROBOT);

    const [container] = fakeContainers(dir);
    assert.equal(fakeContainers(dir).length, 1);
    assert.match(container.name, /^assay-policy-[0-9a-f]{12}$/);
    assert.equal(container.image, EXPERT);
    assert.deepEqual({ ip: container.publish!.hostIp, port: container.publish!.containerPort }, { ip: "127.0.0.1", port: 8000 });
    assert.equal(container.network, null);
    assert.equal(container.memory, "16g", "the default memory limit");
    assert.deepEqual(container.env, { POLICY_SEED: "7" });
    assert.deepEqual({ gpus: container.gpus, devices: container.devices }, { gpus: "all", devices: [] });
    assert.equal(container.pull, "never");
    assert.ok(processAlive(container.pid));
    assert.match(lines.join("\n"), new RegExp(`${container.name} serves on 127\\.0\\.0\\.1:${container.publish!.hostPort}`));

    // The same expert in this process, fed the same observations, must command the same joints.
    const reference = new ExpertPolicy(embodimentFor("so101"));
    await session.reset({ seed: 3, instruction: "pick up the red cube", controlRateHz: 10 });
    await reference.reset();
    let joints = [0, -0.4, 0.6, 0.3, 0, 1.5];
    for (let step = 0; step < 12; step++) {
      const observation: Observation = { tNs: BigInt(step) * 100_000_000n, jointPositionsRad: joints, cameras: {}, instruction: "pick up the red cube" };
      const action = await session.act(observation);
      assert.deepEqual(action, await reference.act(observation), `step ${step}`);
      joints = action;
    }
    assert.notDeepEqual(joints, [0, -0.4, 0.6, 0.3, 0, 1.5], "the arm was commanded somewhere");

    await session.close();
    assert.deepEqual(fakeContainers(dir), []);
    // The server process is gone, and its port with it. (No connect test on the port: once freed, an
    // ephemeral port may be taken by any process on a busy machine, so that would be flaky.)
    assert.equal(processAlive(container.pid), false);
    await session.close();
  });

  it("by default puts the container on the internal network only, with the memory limit and the GPUs the config selects", async () => {
    const lines: string[] = [];
    const runtime = new ContainerPolicyRuntime({ images: [image(EXPERT)], gpus: [1], memory: "6g", startTimeoutMs: 20_000, latencyBudgetMs: 5000, log: (l) => lines.push(l) });
    const session = await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_net" });
    const [container] = fakeContainers(dir);
    assert.deepEqual(
      { publish: container.publish, network: container.network, memory: container.memory, gpus: container.gpus },
      { publish: null, network: "assay-policy", memory: "6g", gpus: "device=1" },
    );
    assert.deepEqual(fakeNetworks(dir), ["assay-policy"], "created --internal on first use");
    assert.match(lines.join("\n"), new RegExp(`${container.name} serves on ${container.ip!.replace(/\./g, "\\.")}:8000`));
    await episode(session, 1);
    // The next run's container joins the same network; nothing is created twice.
    await episode(await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_net2" }), 1);
    assert.deepEqual(fakeNetworks(dir), ["assay-policy"]);
    await runtime.close();
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("selects GPUs by index: docker's quoted device list, podman's CDI devices", () => {
    assert.deepEqual(gpuArgs("docker", false), []);
    assert.deepEqual(gpuArgs("docker", true), ["--gpus", "all"]);
    assert.deepEqual(gpuArgs("docker", [0]), ["--gpus", "device=0"]);
    assert.deepEqual(gpuArgs("docker", [0, 2]), ["--gpus", '"device=0,2"']);
    assert.deepEqual(gpuArgs("podman", [0, 2]), ["--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=2"]);
  });

  /** One short episode on `session`: reset, then `steps` steps from a fixed pose; the actions. */
  const episode = async (session: Awaited<ReturnType<ContainerPolicyRuntime["start"]>>, seed: number, steps = 3): Promise<number[][]> => {
    await session.reset({ seed, instruction: "pick up the red cube", controlRateHz: 10 });
    const actions: number[][] = [];
    let joints = [0, -0.4, 0.6, 0.3, 0, 1.5];
    for (let step = 0; step < steps; step++) {
      joints = await session.act({ tNs: BigInt(step) * 100_000_000n, jointPositionsRad: joints, cameras: {}, instruction: "pick up the red cube" });
      actions.push(joints);
    }
    await session.close();
    return actions;
  };

  it("keeps one container per run across its episodes, resets it between them, and replaces it when another run starts", async () => {
    const lines: string[] = [];
    const runtime = new ContainerPolicyRuntime({ images: [image(EXPERT)], startTimeoutMs: 20_000, latencyBudgetMs: 5000, log: (l) => lines.push(l) });
    const before = fakeRuns(dir).length;
    const started = await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_a" });
    assert.deepEqual(started.image, { image: EXPERT, id: fakeImageId(EXPERT), repo_digests: [fakeRepoDigest(EXPERT)] }, "the image is pinned by digest for the episode's meta");
    const first = await episode(started, 1);
    const [warm] = fakeContainers(dir);
    assert.ok(warm && processAlive(warm.pid), "the run's container outlives its first episode");
    const again = await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_a" });
    assert.deepEqual(again.image, started.image);
    const second = await episode(again, 1);
    const third = await episode(await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_a" }), 2);
    assert.equal(fakeRuns(dir).length - before, 1, "three episodes of one run: one container start");
    assert.deepEqual(second, first, "after the reset the server acts as on a fresh episode");
    assert.equal(third.length, 3);
    assert.match(lines.join("\n"), new RegExp(`run run_a reuses container ${warm.name}`));

    await episode(await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_b" }), 1);
    assert.equal(fakeRuns(dir).length - before, 2, "another run: its own container");
    assert.equal(processAlive(warm.pid), false, "run_a's container was removed when run_b started");
    assert.deepEqual(fakeContainers(dir).map((c) => c.name), [fakeRuns(dir).at(-1)!.name]);
    await runtime.close();
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("replaces a warm container whose server does not answer the reset message (an older server)", async () => {
    const lines: string[] = [];
    const runtime = new ContainerPolicyRuntime({ images: [image(OLD_SERVER)], startTimeoutMs: 20_000, latencyBudgetMs: 5000, log: (l) => lines.push(l) });
    const before = fakeRuns(dir).length;
    await episode(await runtime.start(containerPolicy(OLD_SERVER), ROBOT, { runId: "run_old" }), 1);
    await episode(await runtime.start(containerPolicy(OLD_SERVER), ROBOT, { runId: "run_old" }), 1);
    assert.equal(fakeRuns(dir).length - before, 2);
    assert.match(lines.join("\n"), /did not answer the reset message .*starting a fresh one/);
    assert.equal(fakeContainers(dir).length, 1);
    await runtime.close();
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("removes a run's warm container once the cell has been idle for idleStopMs", async () => {
    const lines: string[] = [];
    let removed!: () => void;
    const gone = new Promise<void>((resolve) => (removed = resolve));
    const runtime = new ContainerPolicyRuntime({
      images: [image(EXPERT)], startTimeoutMs: 20_000, latencyBudgetMs: 5000, idleStopMs: 50,
      log: (l) => {
        lines.push(l);
        if (/removed container .* idle for/.test(l)) removed();
      },
    });
    await episode(await runtime.start(containerPolicy(EXPERT), ROBOT, { runId: "run_idle" }), 1);
    const [warm] = fakeContainers(dir);
    assert.ok(processAlive(warm.pid), "kept after its episode");
    await gone;
    assert.deepEqual(fakeContainers(dir), []);
    assert.equal(processAlive(warm.pid), false);
    await runtime.close();
  });

  it("gives a fresh container's first inference the warm-up allowance, never charged against latency_budget_ms", async () => {
    const server = await startEndpointPolicyServer({ model: "so101", delayMs: 300 });
    try {
      const endpoints = new EndpointPolicyRuntime({ budget: { maxConsecutiveMisses: 1 } });
      const policy = { type: "endpoint", url: server.wsUrl, latency_budget_ms: 100 };
      const warm = await endpoints.start(policy, ROBOT, { warmupMs: 5000 });
      const cold = await endpoints.start(policy, ROBOT);
      for (const s of [warm, cold]) await s.reset({ seed: 1, controlRateHz: 10 });
      const observation: Observation = { tNs: 0n, jointPositionsRad: [0, -0.4, 0.6, 0.3, 0, 1.5], cameras: {} };
      assert.equal((await warm.act(observation)).length, 6, "a slow first inference inside the allowance acts");
      await assert.rejects(warm.act({ ...observation, tNs: 100_000_000n }), /missed its latency_budget_ms of 100 ms 1 times in a row/, "the second step is held to the budget");
      await assert.rejects(cold.act(observation), /missed its latency_budget_ms/, "without the allowance the first step is charged");
      for (const s of [warm, cold]) await s.close();
    } finally {
      await server.close();
    }
  });

  it("drives an image that serves openpi's protocol with the observation map its config names", async () => {
    const runtime = new ContainerPolicyRuntime({
      images: [image(OPENPI, { protocol: "openpi", observationMap: { preset: "droid" } })], gpus: false, startTimeoutMs: 20_000, latencyBudgetMs: 5000, log: () => undefined,
    });
    const policy = { ...containerPolicy(OPENPI), observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"] } };
    const session = await runtime.start(policy, ROBOT);
    const grey = (width: number, height: number) => {
      const jpeg = encodeJpegSync(new Uint8Array(width * height * 3).fill(128), width, height, 80);
      return { tNs: 0n, width, height, jpeg };
    };
    const cameras = { top: grey(640, 480), wrist: grey(320, 240) };
    await session.reset({ seed: 3, instruction: "pick up the red cube", controlRateHz: 30 });
    for (let step = 0; step < 9; step++) {
      const action = await session.act({ tNs: BigInt(step) * 33_000_000n, jointPositionsRad: [0, -0.4, 0.6, 0.3, 0, 1.5], gripperOpening: 1, cameras, instruction: "pick up the red cube" });
      assert.equal(action.length, 6);
      assert.ok(action.every(Number.isFinite), `step ${step}: ${action}`);
    }
    const [container] = fakeContainers(dir);
    assert.equal(container.image, OPENPI);
    await session.close();
    assert.deepEqual(fakeContainers(dir), []);
    assert.equal(processAlive(container.pid), false);
  });

  it("keeps an openpi container across a run's episodes, each episode on a new connection (openpi's reset)", async () => {
    const runtime = new ContainerPolicyRuntime({
      images: [image(OPENPI, { protocol: "openpi", observationMap: { preset: "droid" } })], startTimeoutMs: 20_000, latencyBudgetMs: 5000, log: () => undefined,
    });
    const policy = { ...containerPolicy(OPENPI), observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"] } };
    const jpeg = encodeJpegSync(new Uint8Array(64 * 48 * 3).fill(128), 64, 48, 80);
    const cameras = { top: { tNs: 0n, width: 64, height: 48, jpeg }, wrist: { tNs: 0n, width: 64, height: 48, jpeg } };
    const before = fakeRuns(dir).length;
    for (let e = 0; e < 2; e++) {
      const session = await runtime.start(policy, ROBOT, { runId: "run_openpi" });
      await session.reset({ seed: e, instruction: "pick up the red cube", controlRateHz: 30 });
      assert.equal((await session.act({ tNs: 0n, jointPositionsRad: [0, -0.4, 0.6, 0.3, 0, 1.5], gripperOpening: 1, cameras, instruction: "pick up the red cube" })).length, 6);
      await session.close();
    }
    assert.equal(fakeRuns(dir).length - before, 1, "two episodes of one run: one container start");
    await runtime.close();
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("runs podman when configured, giving it GPUs as the NVIDIA CDI device; closing the runtime removes open sessions' containers", async () => {
    const bin = mkdtempSync(join(tmpdir(), "assay-podman-"));
    try {
      symlinkSync(join(FAKE_BIN, "docker"), join(bin, "podman"));
      const runtime = new ContainerPolicyRuntime({ images: [image(EXPERT)], engine: "podman", gpus: true, searchPath: `${bin}${delimiter}${FAKE_BIN}`, startTimeoutMs: 20_000, latencyBudgetMs: 5000 });
      const session = await runtime.start(containerPolicy(EXPERT), ROBOT);
      const [container] = fakeContainers(dir);
      assert.deepEqual({ gpus: container.gpus, devices: container.devices }, { gpus: null, devices: ["nvidia.com/gpu=all"] });
      // The agent shutting down mid-episode: the runtime removes what is still running.
      await runtime.close();
      assert.deepEqual(fakeContainers(dir), []);
      await session.close();
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("refuses an image that is not configured, naming the ones it runs", async () => {
    const runtime = new ContainerPolicyRuntime({ images: [image(EXPERT), image(MUTE)] });
    await assert.rejects(runtime.start(containerPolicy("ghcr.io/acme/other:2"), ROBOT),
      /this cell does not run image "ghcr.io\/acme\/other:2"; it runs assay\/expert-picker:1, assay\/never-listens:1 \(policies.images in the agent config\)/);
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("surfaces the engine's own message when run fails, and says how to get the image", async () => {
    const runtime = new ContainerPolicyRuntime({ images: [image("assay/absent:1")] });
    await assert.rejects(runtime.start(containerPolicy("assay/absent:1"), ROBOT), (error: Error) => {
      assert.match(error.message, /^docker run assay\/absent:1 failed \(exit 125\): docker: Error response from daemon: No such image: assay\/absent:1\./);
      assert.match(error.message, /pull it first \(docker pull assay\/absent:1\)/);
      return true;
    });
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("gives up on an image that never answers within startTimeoutMs, and removes its container", async () => {
    const runtime = new ContainerPolicyRuntime({ images: [image(MUTE, { port: 9000 })], startTimeoutMs: 5000 });
    await assert.rejects(runtime.start(containerPolicy(MUTE), ROBOT), /assay\/never-listens:1 did not answer on its port 9000 within 5 s of starting \(policies.startTimeoutMs\); its last output: loading checkpoint from the hub; the image must serve/);
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("notices a container that exits while starting, without waiting out the start timeout", async () => {
    const runtime = new ContainerPolicyRuntime({ images: [image(CRASH)], startTimeoutMs: 60_000 });
    await assert.rejects(runtime.start(containerPolicy(CRASH), ROBOT), /the container of assay\/crashes:1 stopped before its policy server answered; its last output: policy server: no checkpoint in \/models; it must keep serving on port 8000/);
    assert.deepEqual(fakeContainers(dir), []);
  });

  it("removes the policy containers a crashed agent left behind, and nothing else", async () => {
    const docker = (...args: string[]) => execFileSync("docker", args, { encoding: "utf8" });
    docker("run", "--detach", "--name", "assay-policy-0123456789ab", "--publish", "127.0.0.1:1:8000", MUTE);
    docker("run", "--detach", "--name", "someone-elses-db", "--publish", "127.0.0.1:2:5432", MUTE);
    const leftover = fakeContainers(dir).find((c) => c.name === "assay-policy-0123456789ab")!;
    const runtime = new ContainerPolicyRuntime({ images: [image(EXPERT)] });
    assert.deepEqual(await runtime.cleanup(), ["assay-policy-0123456789ab"]);
    assert.deepEqual(fakeContainers(dir).map((c) => c.name), ["someone-elses-db"]);
    assert.equal(processAlive(leftover.pid), false);
    assert.deepEqual(await runtime.cleanup(), []);
    docker("rm", "-f", "someone-elses-db");
  });

  it("says in words that no engine is installed", async () => {
    const empty = mkdtempSync(join(tmpdir(), "assay-no-engine-"));
    try {
      const runtime = new ContainerPolicyRuntime({ images: [image(EXPERT)], searchPath: empty });
      await assert.rejects(runtime.start(containerPolicy(EXPERT), ROBOT),
        /^Error: No container engine: docker and podman are not on PATH; install one \(docs\/install-cell-agent.md, Policies\) or set policies.runtime to none$/);
      const podman = new ContainerPolicyRuntime({ images: [image(EXPERT)], engine: "podman", searchPath: FAKE_BIN });
      await assert.rejects(podman.start(containerPolicy(EXPERT), ROBOT), /No container engine: podman is not on PATH/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  describe("doctor probes", () => {
    const probes = realProbes();

    it("finds the engine on PATH and reads its version", async () => {
      assert.deepEqual(await probes.containerEngine(), { state: "ready", engine: "docker", version: FAKE_ENGINE_VERSION });
    });

    it("lists the configured images the engine does not have", async () => {
      assert.deepEqual(await probes.missingImages("docker", [EXPERT, "assay/absent:1", MUTE, "assay/absent:2"]), ["assay/absent:1", "assay/absent:2"]);
    });

    it("lists the images present with their ids and registry digests", async () => {
      assert.deepEqual(await probes.imageDigests!("docker", [EXPERT, "assay/absent:1"]), {
        [EXPERT]: { id: fakeImageId(EXPERT), repoDigests: [fakeRepoDigest(EXPERT)] },
      });
    });

    it("reports an engine whose daemon does not answer, with the engine's words", async () => {
      writeFileSync(join(dir, "daemon-down"), "");
      try {
        const found = await probes.containerEngine();
        assert.equal(found.state, "silent");
        assert.match((found as { detail: string }).detail, /docker version failed \(exit 1\): Cannot connect to the Docker daemon/);
      } finally {
        rmSync(join(dir, "daemon-down"));
      }
    });

    it("reports no engine when neither docker nor podman is on PATH, or not the one configured", async () => {
      const empty = mkdtempSync(join(tmpdir(), "assay-no-engine-"));
      const path = process.env.PATH;
      try {
        process.env.PATH = empty;
        assert.deepEqual(await probes.containerEngine(), { state: "missing" });
        process.env.PATH = FAKE_BIN;
        assert.deepEqual(await probes.containerEngine("podman"), { state: "missing" });
      } finally {
        process.env.PATH = path;
        rmSync(empty, { recursive: true, force: true });
      }
    });
  });
});

describe("policies config", () => {
  const BASE = { cellId: "so101-b", cellToken: "t", robotModel: "so101", environment: "tabletop@1", dataDir: "/tmp/x" };
  const policies = (value: unknown) => compileAgentConfig({ ...BASE, policies: value }).policies;

  it("keeps old configs valid and fills every default", () => {
    assert.deepEqual(policies(undefined), { runtime: "none", gpus: false, memory: "16g", network: "internal", startTimeoutMs: 120_000, latencyBudgetMs: 200, warmupMs: 120_000, idleStopMs: 600_000, images: [] });
    assert.deepEqual(policies({ runtime: "container", images: ["assay/x:1"] }), {
      runtime: "container", gpus: false, memory: "16g", network: "internal", startTimeoutMs: 120_000, latencyBudgetMs: 200, warmupMs: 120_000, idleStopMs: 600_000,
      images: [{ image: "assay/x:1", protocol: "json", port: 8000, env: {} }],
    });
  });

  it("reads image entries with their protocol, port, observation map and env", () => {
    const compiled = policies({
      runtime: "container", engine: "podman", gpus: true, startTimeoutMs: 300_000, latencyBudgetMs: 120, warmupMs: 300_000, idleStopMs: 60_000,
      images: ["assay/x:1", { image: "ghcr.io/acme/pi0:3", protocol: "openpi", port: 8001, observationMap: { "observation/image": "top" }, env: { HF_HOME: "/cache" } }],
    });
    assert.deepEqual(compiled, {
      runtime: "container", engine: "podman", gpus: true, memory: "16g", network: "internal", startTimeoutMs: 300_000, latencyBudgetMs: 120, warmupMs: 300_000, idleStopMs: 60_000,
      images: [
        { image: "assay/x:1", protocol: "json", port: 8000, env: {} },
        { image: "ghcr.io/acme/pi0:3", protocol: "openpi", port: 8001, observationMap: { "observation/image": "top" }, env: { HF_HOME: "/cache" } },
      ],
    });
  });

  it("names the offending value in plain words", () => {
    assert.throws(() => policies({ runtime: "container", engine: "lxc" }), /"policies.engine" must be one of "docker", "podman"; got "lxc"/);
    assert.throws(() => policies({ images: [{ image: "assay/x:1", protocol: "grpc" }] }), /"policies.images\[0\].protocol" must be one of "json", "openpi"; got "grpc"/);
    assert.throws(() => policies({ images: ["--privileged"] }), /"policies.images\[0\]" must be an image reference such as "ghcr.io\/acme\/picker:3"; got "--privileged"/);
    assert.throws(() => policies({ images: [{ image: "assay/x:1", port: 0 }] }), /"policies.images\[0\].port" must be a number in \[1, 65535\]; got 0/);
    assert.throws(() => policies({ images: [{ image: "assay/x:1", env: { "A-B": "1" } }] }), /"policies.images\[0\].env" must map variable names/);
    assert.throws(() => policies({ images: [{ image: "assay/x:1", volumes: ["/:/host"] }] }), /unknown agent config key "policies.images\[0\].volumes"/);
    assert.throws(() => policies({ images: ["assay/x:1", { image: "assay/x:1" }] }), /names "assay\/x:1" twice/);
    assert.throws(() => policies({ gpus: "yes" }), /"policies.gpus" must be true, false, or GPU indices such as \[0\] or \[0, 1\] \(as nvidia-smi numbers them\); got "yes"/);
    assert.throws(() => policies({ gpus: [0, 0] }), /"policies.gpus" must be .*; got \[0,0\]/);
    assert.throws(() => policies({ memory: "lots" }), /"policies.memory" must be a memory size as docker's --memory takes it, e.g. "16g" or "8192m"; got "lots"/);
    assert.throws(() => policies({ network: "host" }), /"policies.network" must be one of "internal", "published"; got "host"/);
    assert.deepEqual({ ...policies({ gpus: [0, 1], memory: "24g", network: "published" }), images: [] }, { ...policies({}), gpus: [0, 1], memory: "24g", network: "published" });
  });

  it("gives a container runtime for runtime container, and a refusal in words for none", async () => {
    const container = policyRuntimeFor(policies({ runtime: "container", images: ["assay/x:1"] }));
    assert.ok(container instanceof ContainerPolicyRuntime);
    assert.deepEqual(container.available(), ["assay/x:1"]);
    const none = policyRuntimeFor(policies({ runtime: "none", images: ["assay/x:1"] }));
    assert.deepEqual(none.available(), []);
    await assert.rejects(none.start(containerPolicy("assay/x:1"), ROBOT), /this cell runs no policy images \(policies.runtime is "none" in its agent config\), so it cannot start image assay\/x:1/);
  });
});

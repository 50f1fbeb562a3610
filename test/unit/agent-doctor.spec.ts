import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { parseCliArgs } from "../../cell-agent/cli.js";
import { openGpioEstop } from "../../cell-agent/devices/estop/gpio-estop.js";
import { SceneReadyGate } from "../../cell-agent/devices/scene/scene-ready-gate.js";
import { jpegSize } from "../../cell-agent/devices/camera/mjpeg-camera.js";
import { diskFullHold } from "../../cell-agent/disk-space.js";
import { exitCodeOf, formatReport, type CheckResult } from "../../cell-agent/doctor/check-result.js";
import { runDoctor } from "../../cell-agent/doctor/doctor.js";
import type { DoctorProbes } from "../../cell-agent/doctor/probes.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { LEROBOT_FILE } from "../support/lerobot-calibration-file.js";

const CONFIG = {
  cellId: "so101-b", cellToken: "assay_cell_x", robotModel: "so101", environment: "tabletop@1", dataDir: "/var/lib/assay/cell-agent",
  coordinatorAddress: "coord.lab:50051",
  motors: { kind: "feetech", path: "/dev/ttyACM0", calibration: "/etc/assay/calibration.json" },
  estop: { kind: "serial", path: "/dev/ttyUSB1", line: "cts" },
};

function errno(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A healthy cell PC; each test breaks one thing. */
function probes(overrides: Partial<DoctorProbes> = {}, config: object = CONFIG): DoctorProbes {
  return {
    readFile: () => JSON.stringify(config),
    pathExists: () => true,
    openSerial: async () => undefined,
    openMotors: async () => ({ readFirmware: async () => "3.11", close: async () => undefined }),
    readEstop: async () => false,
    openCamera: async (camera) => ({ width: 640, height: 480, measuredRateHz: camera.rateHz, firstFrameLatencyMs: 350, captureLatencyMs: 4.2, clock: { kind: "device_monotonic", description: "" } }),
    toggleDeadman: async () => undefined,
    pingNatNet: async () => ({ serverName: "Motive", rttMs: 2 }),
    monotonicResolutionNs: () => 40,
    localAgentStatus: async () => null,
    tcpConnect: async () => undefined,
    checkToken: async () => ({ accepted: true }),
    helloWelcome: async () => ({ sentAtMs: 1_000_000, receivedAtMs: 1_000_010, serverTimeMs: 1_000_004 }),
    freeBytes: () => 200e9,
    lastSeqSent: () => 0,
    containerEngine: async () => ({ state: "ready", engine: "docker", version: "27.5.1" }),
    missingImages: async () => [],
    lerobotCalibration: () => null,
    ...overrides,
  };
}

const pins = loadFirmwarePins();
const doctor = (p: DoctorProbes) => runDoctor({ configPath: "/etc/assay/cell-agent.json", probes: p, pins });
const line = (results: CheckResult[], name: string) => {
  const found = results.find((r) => r.name === name);
  assert.ok(found, `no "${name}" line in:\n${formatReport(results)}`);
  return found;
};

describe("cell-agent doctor", () => {
  it("passes a healthy cell, saying that policy containers are off by default", async () => {
    const results = await doctor(probes());
    const notPassed = results.filter((r) => r.verdict !== "PASS").map((r) => r.name);
    assert.deepEqual(notPassed, [], formatReport(results));
    assert.match(line(results, "policies").sentence, /Policy containers are off \(policies.runtime is "none"\): this cell runs endpoint policies only/);
    assert.equal(exitCodeOf(results), 0);
    assert.match(formatReport(results), /VERDICT: READY. Every check passed/);
  });

  describe("LeRobot calibration", () => {
    const offsets = Object.values(LEROBOT_FILE).map((m) => m.homing_offset);
    const bus = (read: number[]) => async () => ({ readFirmware: async () => "3.11", readHomingOffsetTicks: async () => read, close: async () => undefined });

    it("says nothing when none is imported", async () => {
      const results = await doctor(probes());
      assert.equal(results.find((r) => r.name === "LeRobot calibration"), undefined);
    });
    it("passes when every servo's Homing_Offset matches the imported file", async () => {
      const results = await doctor(probes({ lerobotCalibration: () => LEROBOT_FILE, openMotors: bus(offsets) }));
      assert.equal(line(results, "LeRobot calibration").verdict, "PASS", formatReport(results));
      assert.match(line(results, "LeRobot calibration").sentence, /every servo's Homing_Offset matches it/);
    });
    it("fails naming the joint whose Homing_Offset differs, and says to import the arm's current file", async () => {
      const results = await doctor(probes({ lerobotCalibration: () => LEROBOT_FILE, openMotors: bus([...offsets.slice(0, 5), 0]) }));
      const lerobot = line(results, "LeRobot calibration");
      assert.equal(lerobot.verdict, "FAIL");
      assert.match(lerobot.sentence, /gripper reads 0, the file says 1400/);
      assert.match(formatReport(results), /cell-agent calibration import-lerobot/);
    });
    it("fails on a bad imported file, and only reports the file while the agent runs", async () => {
      const bad = await doctor(probes({ lerobotCalibration: () => { throw new Error("LeRobot calibration x.json: gripper.id must be 6; got 7"); } }));
      assert.match(line(bad, "LeRobot calibration").sentence, /cannot be used: LeRobot calibration x\.json: gripper\.id must be 6; got 7/);
      const running = await doctor(probes({ lerobotCalibration: () => LEROBOT_FILE, localAgentStatus: async () => ({ state: "idle" }) }));
      assert.match(line(running, "LeRobot calibration").sentence, /were not checked against it/);
    });
  });

  describe("dead-man output", () => {
    const DEADMAN = { ...CONFIG, safety: { deadman: { kind: "serial", path: "/dev/ttyUSB2", line: "rts" } } };

    it("passes without one, saying what a Feetech bus lacks and where the answer is documented", async () => {
      const deadman = line(await doctor(probes()), "dead-man output");
      assert.equal(deadman.verdict, "PASS");
      assert.match(deadman.sentence, /No dead-man output is configured \(safety.deadman\)\. If the agent dies, nothing cuts servo power on a Feetech bus.*docs\/safety.md, section 3/);
    });

    it("toggles the configured line, or fails naming it", async () => {
      const toggled: object[] = [];
      const ok = line(await doctor(probes({ toggleDeadman: async (d) => void toggled.push(d) }, DEADMAN)), "dead-man output");
      assert.equal(ok.verdict, "PASS", ok.sentence);
      assert.match(ok.sentence, /The dead-man output \(RTS of \/dev\/ttyUSB2\) toggles every 50 ms/);
      assert.deepEqual(toggled, [{ kind: "serial", path: "/dev/ttyUSB2", line: "rts", togglePeriodMs: 50 }]);
      const broken = line(await doctor(probes({ toggleDeadman: async () => { throw new Error("Input/output error"); } }, DEADMAN)), "dead-man output");
      assert.equal(broken.verdict, "FAIL");
      assert.equal(broken.sentence, "The dead-man output (RTS of /dev/ttyUSB2) cannot be toggled: Input/output error.");
      const missing = line(await doctor(probes({ openSerial: async (path) => { if (path === "/dev/ttyUSB2") throw errno("ENOENT", "no such file"); } }, DEADMAN)), "dead-man output");
      assert.equal(missing.verdict, "FAIL");
    });
  });

  describe("policies", () => {
    const CONTAINERS = { ...CONFIG, policies: { runtime: "container", images: ["assay/picker:3", { image: "ghcr.io/acme/pi0:1", protocol: "openpi" }] } };

    it("lists each image present with its id and registry digest", async () => {
      const id = `sha256:${"ab".repeat(32)}`;
      const results = await doctor(probes({
        containerEngine: async () => ({ state: "ready", engine: "docker", version: "27.5.1" }),
        imageDigests: async () => ({ "assay/picker:3": { id, repoDigests: [] }, "ghcr.io/acme/pi0:1": { id, repoDigests: ["ghcr.io/acme/pi0@sha256:cd"] } }),
      }, CONTAINERS));
      assert.equal(line(results, "policies").sentence,
        `docker 27.5.1 answers and has every configured image locally (assay/picker:3 = ${id} (built here, no registry digest), ghcr.io/acme/pi0:1 = ${id} (ghcr.io/acme/pi0@sha256:cd)).`);
    });

    it("passes naming the engine and its version when every configured image is on the cell", async () => {
      const asked: Array<string | undefined> = [];
      const results = await doctor(probes({ containerEngine: async (preferred) => (asked.push(preferred), { state: "ready", engine: "docker", version: "27.5.1" }) }, CONTAINERS));
      const policies = line(results, "policies");
      assert.equal(policies.verdict, "PASS", formatReport(results));
      assert.equal(policies.sentence, "docker 27.5.1 answers and has every configured image locally (assay/picker:3, ghcr.io/acme/pi0:1).");
      const podman = await doctor(probes({ containerEngine: async (preferred) => (asked.push(preferred), { state: "ready", engine: "podman", version: "4.9.3" }) }, { ...CONTAINERS, policies: { ...CONTAINERS.policies, engine: "podman" } }));
      assert.match(line(podman, "policies").sentence, /^podman 4\.9\.3 answers/);
      assert.deepEqual(asked, [undefined, "podman"]);
    });

    it("fails when no engine is installed, saying what to install or switch off", async () => {
      const results = await doctor(probes({ containerEngine: async () => ({ state: "missing" }) }, CONTAINERS));
      const policies = line(results, "policies");
      assert.equal(policies.verdict, "FAIL");
      assert.equal(policies.sentence, "No container engine: docker and podman are not on PATH; install one (docs/install-cell-agent.md, Policies) or set policies.runtime to none.");
      assert.equal(exitCodeOf(results), 1);
    });

    it("fails when the engine's daemon does not answer, with the fix for its cause", async () => {
      const down = line(await doctor(probes({ containerEngine: async () => ({ state: "silent", engine: "docker", detail: "docker version failed (exit 1): Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" }) }, CONTAINERS)), "policies");
      assert.equal(down.verdict, "FAIL");
      assert.equal(down.sentence, "docker is installed but does not answer: docker version failed (exit 1): Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?");
      assert.match(down.fix!, /sudo systemctl enable --now docker/);
      const denied = line(await doctor(probes({ containerEngine: async () => ({ state: "silent", engine: "docker", detail: "docker version failed (exit 1): permission denied while trying to connect to the Docker daemon socket" }) }, CONTAINERS)), "policies");
      assert.match(denied.fix!, /sudo usermod -aG docker assay/);
    });

    it("warns about configured images that are not on the cell, with the pull commands", async () => {
      const results = await doctor(probes({ missingImages: async (_engine, images) => images.filter((i) => i.startsWith("ghcr.io")) }, CONTAINERS));
      const policies = line(results, "policies");
      assert.equal(policies.verdict, "WARN");
      assert.match(policies.sentence, /^docker 27\.5\.1 answers, but 1 of 2 configured image\(s\) are not on this cell \(ghcr.io\/acme\/pi0:1\)/);
      assert.equal(policies.fix, "Pull them now: sudo -u assay docker pull ghcr.io/acme/pi0:1.");
      assert.equal(exitCodeOf(results), 0);
    });

    it("warns when images are listed but containers are off, and asks no engine", async () => {
      const results = await doctor(probes({ containerEngine: async () => assert.fail("no engine should be probed") }, { ...CONFIG, policies: { runtime: "none", images: ["assay/picker:3"] } }));
      const policies = line(results, "policies");
      assert.equal(policies.verdict, "WARN");
      assert.match(policies.sentence, /Policy containers are off \(policies.runtime is "none"\), so the images listed in policies.images \(assay\/picker:3\) are not run/);
    });
  });

  it("tells the technician to add the assay user to dialout when the serial device is not permitted", async () => {
    const results = await doctor(probes({ openSerial: async () => { throw errno("EACCES", "Error: Permission denied, cannot open /dev/ttyACM0"); } }));
    const bus = line(results, "servo bus device");
    assert.equal(bus.verdict, "FAIL");
    assert.match(bus.fix!, /add the assay user to the dialout group/i);
    assert.equal(exitCodeOf(results), 1);
  });

  it("checks each bus of a robot on several buses on its own lines, then opens the robot on all of them", async () => {
    const joints = pins.models.find((m) => m.id === "aloha")!.joints;
    const aloha = {
      ...CONFIG, cellId: "aloha-a", robotModel: "aloha",
      motors: { kind: "dynamixel", buses: [
        { name: "left", path: "/dev/ttyDXL_follower_left", calibration: "/etc/assay/left.json", joints: joints.slice(0, 7) },
        { name: "right", path: "/dev/ttyDXL_follower_right", calibration: "/etc/assay/right.json", joints: joints.slice(7) },
      ] },
    };
    const opened: number[] = [];
    const healthy = await doctor(probes({ openMotors: async (motors) => { if (motors.kind !== "ros") opened.push(motors.buses.length); return { readFirmware: async () => "2.1", close: async () => undefined }; } }, aloha));
    for (const name of ["servo bus device (left)", "servos (left)", "servo bus device (right)", "servos (right)", "firmware"]) assert.equal(line(healthy, name).verdict, "PASS", name);
    assert.match(line(healthy, "servos (right)").sentence, /Every servo on \/dev\/ttyDXL_follower_right \(right_waist, .*right_gripper\) answered/);
    assert.deepEqual(opened, [1, 1, 2], "each bus alone, then the robot on both");
    const rightSilent = await doctor(probes({
      openSerial: async (path) => { if (path.endsWith("right")) throw errno("ENOENT", `No such file or directory, cannot open ${path}`); },
      openMotors: async () => ({ readFirmware: async () => "2.1", close: async () => undefined }),
    }, aloha));
    assert.equal(line(rightSilent, "servos (left)").verdict, "PASS", "the left bus is still checked");
    assert.match(line(rightSilent, "servo bus device (right)").sentence, /There is no device at \/dev\/ttyDXL_follower_right/);
    assert.equal(exitCodeOf(rightSilent), 1);
  });

  it("names a missing device, a silent servo, and the found and pinned firmware", async () => {
    const missing = await doctor(probes({ openSerial: async (path) => { throw errno("ENOENT", `No such file or directory, cannot open ${path}`); } }));
    assert.match(line(missing, "servo bus device").sentence, /There is no device at \/dev\/ttyACM0/);
    const silent = await doctor(probes({ openMotors: async () => { throw new Error("ping id 3: no reply from servo 3 after 4 attempts"); } }));
    assert.match(line(silent, "servos").sentence, /servo 3/);
    assert.match(line(silent, "servos").fix!, /servo power/);
    const old = await doctor(probes({ openMotors: async () => ({ readFirmware: async () => "3.10", close: async () => undefined }) }));
    const firmware = line(old, "firmware");
    assert.equal(firmware.verdict, "FAIL");
    assert.match(firmware.sentence, /reports firmware 3\.10 but 3\.11 is pinned for cell so101-b/);
  });

  describe("cameras", () => {
    const CAMERAS = { ...CONFIG, cameras: [{ name: "top", device: "/dev/video0" }, { name: "wrist", device: "/dev/video2", width: 1280, height: 720 }] };
    it("opens every configured camera and reports its size, rate and latency", async () => {
      const opened: string[] = [];
      const results = await doctor(probes({
        openCamera: async (camera) => {
          opened.push(camera.name);
          return { width: camera.kind === "v4l2" ? camera.width : 0, height: camera.kind === "v4l2" ? camera.height : 0, measuredRateHz: 29.8, firstFrameLatencyMs: 412, captureLatencyMs: 6.1, clock: { kind: "device_monotonic", description: "" } };
        },
      }, CAMERAS));
      assert.deepEqual(opened, ["top", "wrist"]);
      const top = line(results, "camera top");
      assert.equal(top.verdict, "PASS");
      assert.match(top.sentence, /\/dev\/video0 gives 640x480 at 29\.8 frames\/s; first frame 412 ms after opening, capture-to-arrival latency 6\.1 ms \(device_monotonic\)/);
      assert.match(line(results, "camera wrist").sentence, /\/dev\/video2 gives 1280x720/);
    });
    it("fails a camera that gives no frame, tells how to list the cameras, and warns about a wrong size or a slow rate", async () => {
      const results = await doctor(probes({
        openCamera: async (camera) => {
          if (camera.name === "top") throw new Error("camera top (/dev/video0): no frame yet (ffmpeg exited (code 1): /dev/video0: No such file or directory)");
          return { width: 640, height: 480, measuredRateHz: 12, firstFrameLatencyMs: 300 };
        },
      }, CAMERAS));
      const top = line(results, "camera top");
      assert.equal(top.verdict, "FAIL");
      assert.match(top.sentence, /\/dev\/video0 gave no frame: .*No such file or directory/);
      assert.match(top.fix!, /npm run cell-agent -- cameras/);
      const wrist = line(results, "camera wrist");
      assert.equal(wrist.verdict, "WARN");
      assert.match(wrist.sentence, /gives 640x480 .* The config expects 1280x720/);
      const slow = line(await doctor(probes({ openCamera: async () => ({ width: 640, height: 480, measuredRateHz: 12, firstFrameLatencyMs: 300 }) }, { ...CONFIG, cameras: [{ name: "top", device: "/dev/video0" }] })), "camera top");
      assert.equal(slow.verdict, "WARN");
      assert.match(slow.sentence, /at 12\.0 frames\/s.*records at 30 frames\/s, faster than the camera delivers/);
      const denied = line(await doctor(probes({ openCamera: async () => { throw new Error("ffmpeg exited (code 1): /dev/video0: Permission denied"); } }, { ...CONFIG, cameras: [{ name: "top", device: "/dev/video0" }] })), "camera top");
      assert.match(denied.fix!, /usermod -aG video assay/);
    });
  });
  it("fails a pressed e-stop and an unconfigured one", async () => {
    assert.match(line(await doctor(probes({ readEstop: async () => true })), "e-stop").sentence, /PRESSED/);
    const { estop: _estop, ...withoutEstop } = CONFIG;
    assert.equal(line(await doctor(probes({}, withoutEstop)), "e-stop").verdict, "FAIL");
  });

  it("says in words that an unknown or revoked token needs a new enrollment token", async () => {
    const results = await doctor(probes({ checkToken: async () => ({ accepted: false, code: GrpcStatus.UNAUTHENTICATED, details: "cell_revoked: cell so101-b was revoked" }) }));
    const token = line(results, "coordinator token");
    assert.equal(token.verdict, "FAIL");
    assert.equal(token.sentence, "The coordinator does not know this cell or its token was revoked; ask for a new enrollment token.");
    assert.equal(exitCodeOf(results), 1);
  });

  it("explains an unreachable coordinator", async () => {
    const results = await doctor(probes({ tcpConnect: async () => { throw errno("ECONNREFUSED", "connect ECONNREFUSED"); } }));
    assert.match(line(results, "coordinator reachable").sentence, /connection refused/);
  });

  describe("several coordinators", () => {
    const SEVERAL = { ...CONFIG, coordinatorAddress: undefined, coordinatorAddresses: ["coord-a.lab:50051", "coord-b.lab:50051", "coord-c.lab:50051"] };
    const down = (...dead: string[]) => async (address: string) => {
      if (dead.includes(address)) throw errno("ECONNREFUSED", `connect ECONNREFUSED ${address}`);
    };

    it("passes when every listed coordinator answers, naming them", async () => {
      const dialled: string[] = [];
      const results = await doctor(probes({ tcpConnect: async (address) => void dialled.push(address) }, SEVERAL));
      const reachable = line(results, "coordinator reachable");
      assert.equal(reachable.verdict, "PASS", formatReport(results));
      assert.equal(reachable.sentence, "All 3 coordinators answer on the network (coord-a.lab:50051, coord-b.lab:50051, coord-c.lab:50051).");
      assert.deepEqual(dialled.sort(), SEVERAL.coordinatorAddresses);
      assert.match(line(results, "config file").sentence, /coordinators coord-a.lab:50051, coord-b.lab:50051, coord-c.lab:50051\)/);
    });

    it("warns naming the coordinators that do not answer, and checks the token on one that does", async () => {
      const asked: string[] = [];
      const results = await doctor(probes({
        tcpConnect: down("coord-a.lab:50051", "coord-c.lab:50051"),
        checkToken: async (address) => (asked.push(address), { accepted: true }),
        helloWelcome: async (address) => (asked.push(address), { sentAtMs: 1_000_000, receivedAtMs: 1_000_010, serverTimeMs: 1_000_004 }),
      }, SEVERAL));
      const reachable = line(results, "coordinator reachable");
      assert.equal(reachable.verdict, "WARN");
      assert.equal(reachable.sentence,
        "1 of 3 coordinators answer on the network; coord-a.lab:50051 cannot be reached: nothing listens there (connection refused); " +
        "coord-c.lab:50051 cannot be reached: nothing listens there (connection refused). The cell works, but fails over only to the coordinators that answer.");
      assert.match(reachable.fix!, /coord-a.lab:50051 and coord-c.lab:50051\?.*nc -vz coord-a.lab 50051; nc -vz coord-c.lab 50051/);
      assert.deepEqual(asked, ["coord-b.lab:50051", "coord-b.lab:50051"]);
      assert.equal(line(results, "coordinator token").sentence, "The coordinator at coord-b.lab:50051 accepted the token of cell so101-b.");
      assert.equal(line(results, "hello/welcome").verdict, "PASS");
      assert.equal(exitCodeOf(results), 0, "a cell with some coordinators unreachable can work");
    });

    it("fails when none answers, saying why for each", async () => {
      const results = await doctor(probes({ tcpConnect: down(...SEVERAL.coordinatorAddresses) }, SEVERAL));
      const reachable = line(results, "coordinator reachable");
      assert.equal(reachable.verdict, "FAIL");
      assert.match(reachable.sentence, /^None of the 3 coordinators can be reached: coord-a.lab:50051: nothing listens there \(connection refused\); coord-b.lab:50051: /);
      assert.equal(line(results, "clock offset").verdict, "WARN");
      assert.equal(exitCodeOf(results), 1);
    });
  });

  it("warns about a clock more than 100 ms off the coordinator's and suggests chrony", async () => {
    const results = await doctor(probes({ helloWelcome: async () => ({ sentAtMs: 1_000_000, receivedAtMs: 1_000_010, serverTimeMs: 999_700 }) }));
    const clock = line(results, "clock offset");
    assert.equal(clock.verdict, "WARN");
    assert.match(clock.sentence, /305 ms ahead of the coordinator's/);
    assert.match(clock.fix!, /chrony/);
  });

  it("warns below 5 GB and fails below 1 GB free in dataDir", async () => {
    assert.equal(line(await doctor(probes({ freeBytes: () => 3e9 })), "disk space").verdict, "WARN");
    const low = line(await doctor(probes({ freeBytes: () => 0.5e9 })), "disk space");
    assert.equal(low.verdict, "FAIL");
    assert.match(low.sentence, /Only 0\.5 GB is free/);
  });

  it("leaves the devices of a running agent alone and does not interrupt its episode", async () => {
    let opened = false;
    let hello = false;
    const results = await doctor(probes({
      localAgentStatus: async () => ({ state: "busy" }),
      openSerial: async () => { opened = true; },
      helloWelcome: async () => { hello = true; return { sentAtMs: 0, receivedAtMs: 0, serverTimeMs: 0 }; },
    }));
    assert.equal(opened, false);
    assert.equal(hello, false);
    assert.match(line(results, "devices").fix!, /systemctl stop assay-cell-agent/);
    assert.equal(exitCodeOf(results), 0);
  });

  it("names the offending config key and stops there", async () => {
    const results = await doctor(probes({}, { ...CONFIG, heartbeatMs: 5 }));
    assert.equal(results.length, 1);
    assert.match(results[0].sentence, /unknown agent config key "heartbeatMs"/);
    const absent = await doctor(probes({ readFile: () => { throw errno("ENOENT", "no such file"); } }));
    assert.match(absent[0].sentence, /There is no config file at \/etc\/assay\/cell-agent.json/);
  });
});

describe("cell-agent pieces", () => {
  it("parses the CLI", () => {
    assert.deepEqual(parseCliArgs(["doctor", "--config", "/x.json", "--json"]), { command: "doctor", configPath: "/x.json", json: true });
    assert.equal(parseCliArgs(["run"], { ASSAY_CELL_AGENT_CONFIG: "/e.json" }).configPath, "/e.json");
    assert.throws(() => parseCliArgs(["launch"]), /unknown command "launch"/);
  });

  it("holds work while less than 1 GB is free, saying so once", () => {
    let free = 0.4e9;
    let now = 0;
    const lines: string[] = [];
    const hold = diskFullHold("/data", (l) => lines.push(l), { measure: () => free, nowMs: () => now, everyMs: 10 });
    assert.match(hold()!, /^disk_full: only 0\.4 GB is free in \/data/);
    assert.match(hold()!, /^disk_full/);
    free = 20e9;
    now = 11;
    assert.equal(hold(), null);
    assert.equal(lines.length, 2);
  });

  it("reads a GPIO e-stop through sysfs and fires once per press", async () => {
    const sysfs = mkdtempSync(join(tmpdir(), "assay-gpio-"));
    try {
      mkdirSync(join(sysfs, "gpiochip512"));
      writeFileSync(join(sysfs, "gpiochip512", "base"), "512\n");
      mkdirSync(join(sysfs, "gpio529"));
      writeFileSync(join(sysfs, "gpio529", "value"), "0\n");
      const estop = await openGpioEstop({ kind: "gpio", chip: "gpiochip512", line: 17, pressedWhen: "high", pollMs: 1 }, undefined, sysfs);
      assert.equal(estop.isPressed(), false);
      const fired = new Promise<void>((resolve) => estop.onTrigger(resolve));
      writeFileSync(join(sysfs, "gpio529", "value"), "1\n");
      await fired;
      assert.equal(estop.isPressed(), true);
      await estop.close();
    } finally {
      rmSync(sysfs, { recursive: true, force: true });
    }
  });

  it("waits for the technician's scene confirmation, and times out in words", async () => {
    const gate = new SceneReadyGate();
    assert.equal(gate.confirm(), false);
    const waiting = gate.wait({ since: "", lighting: "nominal", objects: {}, distractors: [] }, 5000, () => null);
    assert.ok(gate.pending);
    assert.equal(gate.confirm(), true);
    await waiting;
    await assert.rejects(gate.wait({ since: "", lighting: "nominal", objects: {}, distractors: [] }, 20, () => null), /no technician confirmed the scene/);
  });

  it("reads a JPEG's size from its SOF header", () => {
    const sof = [0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    assert.deepEqual(jpegSize(new Uint8Array(sof)), { width: 640, height: 480 });
  });

  it("installer --dry-run prints the whole plan and changes nothing", () => {
    const out = execFileSync("bash", [
      "scripts/install-cell-agent.sh", "--dry-run", "--cell-id", "so101-e", "--coordinator", "coord.lab:50051", "--coordinator", "coord-b.lab:50051", "--token", "assay_cell_SECRET",
      "--model", "so101", "--environment", "tabletop@1", "--serial", "/dev/ttyACM0", "--estop-serial", "/dev/ttyUSB1",
      "--config", join(tmpdir(), "assay-never-written", "cell-agent.json"),
    ], { encoding: "utf8" });
    for (const step of [
      /useradd .* assay|user assay exists/, /usermod -aG dialout assay/, /npm ci --omit=dev/, /write .*cell-agent\.json \(mode 600/,
      /"coordinatorAddresses": \[\s*"coord.lab:50051",\s*"coord-b.lab:50051"\s*\]/, /"kind": "feetech"/, /write \/etc\/systemd\/system\/assay-cell-agent\.service/, /ExecStart=.*cell-agent\/cli\.ts run --config/,
      /systemctl enable assay-cell-agent/, /cli\.ts doctor --config/, /systemctl start assay-cell-agent/, /Dry run: nothing was changed/,
    ]) assert.match(out, step);
    assert.doesNotMatch(out, /assay_cell_SECRET/, "the token must not be printed");
  });
});

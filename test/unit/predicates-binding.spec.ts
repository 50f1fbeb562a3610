import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  PredicateSyntaxError,
  checkBindings,
  parsePredicate,
  parseTaskPredicates,
  requiredInstruments,
} from "../../protocol/predicates/index.js";

const catalog = (path: string): any => JSON.parse(readFileSync(new URL(`../../coordinator/catalog/${path}`, import.meta.url), "utf8"));
const pickCube = catalog("tasks/pick-cube-v1.json");
const instrumentsOf = (name: string): string[] =>
  catalog("environments.json")
    .environments.find((env: { name: string }) => env.name === name)
    .instruments.map((instrument: { kind: string }) => instrument.kind);

/** Runs `fn`, expecting a PredicateSyntaxError; returns it. */
function syntaxError(fn: () => unknown): PredicateSyntaxError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof PredicateSyntaxError, `expected PredicateSyntaxError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a PredicateSyntaxError");
}

describe("predicate binding: requiredInstruments", () => {
  const cases: Array<[string, string[]]> = [
    ["pose(cube).z > 0.06 for 1.0s", ["mocap"]],
    ["distance(gripper, cube) < 0.03", ["mocap"]],
    ["height(cube) > initial(height(cube))", ["mocap"]],
    ["gripper.holding", ["gripper_state"]],
    ["gripper.opening < 0.5", ["gripper_state"]],
    ["ft.force > 1 or ft.force_z < 0 or ft.torque > 1", ["ft_wrist"]],
    ["joint(elbow) > 0", ["joint_states"]],
    ["event(door-open) and time < 5", []],
    ["not gripper.holding and joint(wrist) < 1 and ft.force < 10 and pose(cup).yaw > 0", ["ft_wrist", "gripper_state", "joint_states", "mocap"]],
  ];
  for (const [source, expected] of cases) {
    it(`${source} needs [${expected.join(", ")}]`, () => assert.deepEqual(requiredInstruments(parsePredicate(source)), expected));
  }
});

describe("predicate binding: checkBindings", () => {
  it("binds pick-cube to tabletop", () => {
    assert.deepEqual(checkBindings(pickCube, instrumentsOf("tabletop")), []);
  });

  it("reports the mocap predicates of pick-cube on bench-bare, which has no mocap", () => {
    assert.deepEqual(checkBindings(pickCube, instrumentsOf("bench-bare")), [
      { field: "success_predicates", index: 0, name: "lifted", missing: ["mocap"] },
      { field: "stages", index: 0, name: "reached", missing: ["mocap"] },
      { field: "stages", index: 2, name: "lifted", missing: ["mocap"] },
    ]);
  });

  it("lists every missing instrument of a predicate", () => {
    const task = { success_predicates: [{ pressed: "ft.force > 5 and gripper.holding and joint(wrist) > 0" }] };
    assert.deepEqual(checkBindings(task, ["joint_states"]), [
      { field: "success_predicates", index: 0, name: "pressed", missing: ["ft_wrist", "gripper_state"] },
    ]);
  });

  it("needs no instrument for time and events", () => {
    assert.deepEqual(checkBindings({ success_predicates: [{ done: "event(bell) within 3s" }] }, []), []);
  });
});

describe("predicate binding: parseTaskPredicates", () => {
  it("parses every predicate and stage in order, with names", () => {
    const parsed = parseTaskPredicates(pickCube);
    assert.deepEqual(
      parsed.successPredicates.map((p) => [p.field, p.index, p.name]),
      [["success_predicates", 0, "lifted"]],
    );
    assert.deepEqual(
      parsed.stages.map((p) => [p.field, p.index, p.name, p.predicate.source]),
      [
        ["stages", 0, "reached", "distance(gripper, cube) < 0.03"],
        ["stages", 1, "grasped", "gripper.holding"],
        ["stages", 2, "lifted", "pose(cube).z > 0.06 for 1.0s"],
      ],
    );
  });

  it("locates a syntax error at its element", () => {
    const task = { success_predicates: [{ lifted: "height(cube) > 5cm" }], stages: [{ reached: "time > 0" }, { grasped: "gripper.hold" }] };
    const error = syntaxError(() => parseTaskPredicates(task));
    assert.equal(error.field, "stages");
    assert.equal(error.index, 1);
    assert.equal(error.predicateName, "grasped");
    assert.equal(error.position, 0);
    assert.equal(error.reason, 'unknown signal "gripper.hold" at 0; known signals: gripper.opening, gripper.holding');
    assert.equal(error.message, `stages[1] "grasped": ${error.reason}`);
  });

  it("rejects an element with two keys", () => {
    const error = syntaxError(() => parseTaskPredicates({ success_predicates: [{ a: "time > 1", b: "time > 2" }] }));
    assert.equal(error.field, "success_predicates");
    assert.equal(error.index, 0);
    assert.equal(
      error.message,
      'success_predicates[0]: must be an object with exactly one key, the name, whose value is the expression string; got 2 keys in {"a":"time > 1","b":"time > 2"}',
    );
  });

  it("rejects an element whose value is not a string", () => {
    const error = syntaxError(() => parseTaskPredicates({ success_predicates: [{ a: "time > 1" }], stages: [{ lifted: 0.06 }] }));
    assert.equal(error.field, "stages");
    assert.equal(error.index, 0);
    assert.equal(error.predicateName, "lifted");
    assert.match(error.message, /^stages\[0\] "lifted": must be an object .*; got 0\.06 for "lifted"$/);
  });

  it("rejects elements that are not objects", () => {
    for (const element of ["time > 1", ["time > 1"], null]) {
      const error = syntaxError(() => parseTaskPredicates({ success_predicates: [element] }));
      assert.equal(error.index, 0);
      assert.match(error.message, /^success_predicates\[0\]: must be an object with exactly one key/);
    }
  });

  it("rejects a duplicate name within one field, but not across fields", () => {
    const error = syntaxError(() =>
      parseTaskPredicates({ success_predicates: [{ up: "time > 1" }], stages: [{ up: "time > 1" }, { up: "time > 2" }] }),
    );
    assert.equal(error.message, 'stages[1] "up": duplicate name "up"; stages[0] already uses it');
  });

  it("requires a non-empty success_predicates array and an array of stages", () => {
    assert.equal(
      syntaxError(() => parseTaskPredicates({ success_predicates: [] })).message,
      "success_predicates: must be a non-empty array of {<name>: <expression>}; got []",
    );
    assert.equal(
      syntaxError(() => parseTaskPredicates({})).message,
      "success_predicates: must be a non-empty array of {<name>: <expression>}; got undefined",
    );
    assert.equal(
      syntaxError(() => parseTaskPredicates({ success_predicates: [{ a: "true" }], stages: { a: "true" } })).message,
      'stages: must be an array of {<name>: <expression>}; got {"a":"true"}',
    );
  });
});

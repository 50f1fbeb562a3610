import assert from "node:assert/strict";
import { formatPredicate, parsePredicate, type Predicate } from "../../protocol/predicates/index.js";

/** The canonical, fully parenthesized reading of `source`. */
const reading = (source: string) => formatPredicate(parsePredicate(source));

describe("predicate parser: the pick-cube expressions", () => {
  it("reads a pose comparison with a for-duration", () => {
    const predicate = parsePredicate("pose(cube).z > 0.06 for 1.0s");
    assert.equal(predicate.forS, 1);
    assert.equal(predicate.withinS, undefined);
    assert.deepEqual(strip(predicate.condition), {
      kind: "compare",
      op: ">",
      left: { kind: "pose", object: "cube", axis: "z" },
      right: { kind: "number", value: 0.06 },
    });
  });

  it("reads a distance between two tracked objects", () => {
    assert.equal(reading("distance(gripper, cube) < 0.03"), "(distance(gripper, cube) < 0.03)");
  });

  it("reads a bare boolean signal", () => {
    assert.deepEqual(strip(parsePredicate("gripper.holding").condition), { kind: "gripper_holding" });
  });
});

describe("predicate parser: signals", () => {
  const cases: Array<[string, string]> = [
    ["pose(cube).x < 0.3", "(pose(cube).x < 0.3)"],
    ["pose(cube).y >= -0.1", "(pose(cube).y >= (-0.1))"],
    ["pose(cube).yaw <= 0.5", "(pose(cube).yaw <= 0.5)"],
    ["height(cube) > 0.06", "(pose(cube).z > 0.06)"],
    ["distance(block-blue, kit/mug) < 0.05", "(distance(block-blue, kit/mug) < 0.05)"],
    ['distance("my cube", cup) < 0.05', '(distance("my cube", cup) < 0.05)'],
    ["gripper.opening < 0.2", "(gripper.opening < 0.2)"],
    ["ft.force > 5", "(ft.force > 5)"],
    ["ft.force_z < -2", "(ft.force_z < (-2))"],
    ["ft.torque < 1", "(ft.torque < 1)"],
    ["joint(shoulder_pan) > 0.1", "(joint(shoulder_pan) > 0.1)"],
    ["time > 2", "(time > 2)"],
    ["event(drawer-closed)", "event(drawer-closed)"],
    ["height(cube) - initial(height(cube)) > 0.05", "((pose(cube).z - initial(pose(cube).z)) > 0.05)"],
    ["true", "true"],
    ["not false", "(not false)"],
  ];
  for (const [source, expected] of cases) {
    it(`reads ${source}`, () => assert.equal(reading(source), expected));
  }
});

describe("predicate parser: units", () => {
  const value = (source: string) => {
    const condition = parsePredicate(`time > ${source}`).condition;
    assert.equal(condition.kind, "compare");
    return condition.right.kind === "number" ? condition.right.value : NaN;
  };

  it("converts lengths to metres", () => {
    assert.equal(value("2m"), 2);
    assert.equal(value("6cm"), 0.06);
    assert.equal(value("30mm"), 0.03);
  });

  it("converts times to seconds, angles to radians, and keeps newtons", () => {
    assert.equal(value("1.5s"), 1.5);
    assert.equal(value("250ms"), 0.25);
    assert.equal(value("180deg"), Math.PI);
    assert.equal(value("12N"), 12);
    assert.equal(value(".5"), 0.5);
  });

  it("accepts a duration in ms", () => {
    assert.equal(parsePredicate("gripper.holding for 500ms").forS, 0.5);
  });
});

describe("predicate parser: precedence", () => {
  it("binds * and / tighter than + and -, left to right", () => {
    assert.equal(reading("1 + 2 * 3 - 4 / 2 / 2 > 0"), "(((1 + (2 * 3)) - ((4 / 2) / 2)) > 0)");
  });

  it("binds unary minus tighter than *", () => {
    assert.equal(reading("-time * 2 < - -1"), "(((-time) * 2) < (-(-1)))");
  });

  it("binds comparison tighter than not, not tighter than and, and tighter than or", () => {
    assert.equal(
      reading("not time > 1 and gripper.holding or event(a) and event(b)"),
      "(((not (time > 1)) and gripper.holding) or (event(a) and event(b)))",
    );
  });

  it("lets parentheses override", () => {
    assert.equal(reading("(1 + 2) * 3 > 0 and (event(a) or event(b))"), "((((1 + 2) * 3) > 0) and (event(a) or event(b)))");
  });

  it("reads a - b as subtraction outside name arguments", () => {
    assert.equal(reading("time-initial(time) > 1"), "((time - initial(time)) > 1)");
  });
});

describe("predicate parser: temporal suffixes", () => {
  const temporal = (source: string): Pick<Predicate, "forS" | "withinS"> => {
    const { forS, withinS } = parsePredicate(source);
    return { forS, withinS };
  };

  it("takes for and within in either order", () => {
    assert.deepEqual(temporal("gripper.holding for 1s within 10s"), { forS: 1, withinS: 10 });
    assert.deepEqual(temporal("gripper.holding within 10s for 1s"), { forS: 1, withinS: 10 });
  });

  it("applies the suffix to the whole condition", () => {
    assert.equal(reading("gripper.holding and height(cube) > 5cm within 8s"), "(gripper.holding and (pose(cube).z > 0.05)) within 8s");
  });

  it("has neither by default", () => {
    assert.deepEqual(temporal("gripper.holding"), { forS: undefined, withinS: undefined });
  });
});

/** The tree without source offsets, for structural comparison. */
function strip(node: unknown): unknown {
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== "start" && key !== "end")
      .map(([key, value]) => [key, strip(value)]),
  );
}

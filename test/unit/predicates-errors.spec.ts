import assert from "node:assert/strict";
import { PredicateSyntaxError, parsePredicate } from "../../protocol/predicates/index.js";

/** Parses `source`, expecting a PredicateSyntaxError; returns it. */
function syntaxError(source: string): PredicateSyntaxError {
  try {
    parsePredicate(source);
  } catch (error) {
    assert.ok(error instanceof PredicateSyntaxError, `expected PredicateSyntaxError, got ${String(error)}`);
    return error;
  }
  assert.fail(`"${source}" parsed, but should not have`);
}

describe("predicate parser: errors", () => {
  const cases: Array<[source: string, position: number, message: string]> = [
    ["not (time > 1 for 2s)", 14, 'expected ")" at 14, found "for"'],
    ["(time > 1", 9, 'expected ")" at 9, found end of expression'],
    ["time > 1 and", 12, 'expected a number, a signal, "(", "-" or "not" at 12, found end of expression'],
    ["time > > 1", 7, 'expected a number, a signal, "(", "-" or "not" at 7, found ">"'],
    [
      "time > 1 < 2",
      9,
      'expected "and", "or", "for", "within" or end of expression at 9, found "<"; comparisons do not chain; write "a < b and b < c"',
    ],
    ["gripper.holding)", 15, 'expected "and", "or", "for", "within" or end of expression at 15, found ")"'],
    [
      "time > 1 for 1s for 2s",
      16,
      'expected "and", "or", "within" or end of expression at 16, found "for"; a predicate takes "for" at most once',
    ],
    ["time > 1 for 1", 13, 'expected a duration with a time unit, like "1.5s" or "200ms" at 13, found "1"'],
    ["time > 1 within 3cm", 16, 'expected a duration with a time unit, like "1.5s" or "200ms" at 16, found "3cm"'],
    ["time > 3kg", 8, "unknown unit \"kg\" at 8; known units: m, cm, mm, s, ms, deg, N"],
    ["time = 3", 5, 'expected "==" at 5, found "="'],
    ["time > 1 @", 9, 'unexpected character "@" at 9'],
    ["pose(cube) > 1", 11, 'expected "." after "pose(cube)" at 11, found ">"'],
    ["pose(cube).w > 1", 11, 'expected one of .x, .y, .z, .yaw after "pose(cube)" at 11, found "w"'],
    ["pose > 1", 5, 'expected "(" after "pose" at 5, found ">"'],
    ["distance(a b) < 1", 11, 'expected "," between the arguments of "distance" at 11, found "b"'],
    ["joint() > 0", 6, 'expected a joint name at 6, found ")"'],
    ['event("open', 11, "expected a closing '\"' for the name opened at 6, found end of expression"],
    ["gripper", 7, 'expected "." after "gripper" at 7, found end of expression; signals: gripper.opening, gripper.holding'],
    ["pose(cube).z", 0, 'expected a condition (a comparison or a true/false signal) for the predicate at 0, found the number "pose(cube).z"'],
    ["not (time)", 4, 'expected a condition (a comparison or a true/false signal) for "not" at 4, found the number "(time)"'],
    ["gripper.holding and 3 > 1 or time", 29, 'expected a condition (a comparison or a true/false signal) for "or" at 29, found the number "time"'],
    ["gripper.holding > 1", 0, 'expected a number for ">" at 0, found the condition "gripper.holding"'],
    ["1 + event(a) > 1", 4, 'expected a number for "+" at 4, found the condition "event(a)"'],
    ["initial(gripper.holding) > 0", 8, 'expected a number for "initial" at 8, found the condition "gripper.holding"'],
  ];
  for (const [source, position, message] of cases) {
    it(`rejects ${source}`, () => {
      const error = syntaxError(source);
      assert.equal(error.message, message);
      assert.equal(error.position, position);
    });
  }

  it("names the known signals when a signal is unknown", () => {
    const error = syntaxError("time > 1 and hieght > 2");
    assert.equal(error.position, 13);
    assert.equal(
      error.message,
      'unknown signal "hieght" at 13; known signals: ft.force, ft.force_z, ft.torque, gripper.holding, gripper.opening, operator.success, time',
    );
    assert.deepEqual(error.knownNames, ["ft.force", "ft.force_z", "ft.torque", "gripper.holding", "gripper.opening", "operator.success", "time"]);
  });

  it("names the known functions when a function is unknown", () => {
    const error = syntaxError("dist(a, b) < 1");
    assert.equal(error.position, 0);
    assert.equal(error.message, 'unknown function "dist" at 0; known functions: distance, event, height, initial, joint, pose');
    assert.deepEqual(error.knownNames, ["distance", "event", "height", "initial", "joint", "pose"]);
  });

  it("names the fields of a signal group when a field is unknown", () => {
    const error = syntaxError("ft.forse > 1");
    assert.equal(error.message, 'unknown signal "ft.forse" at 0; known signals: ft.force, ft.force_z, ft.torque');
    assert.deepEqual(error.knownNames, ["ft.force", "ft.force_z", "ft.torque"]);
  });

  it("treats keywords as reserved, not as signals", () => {
    assert.equal(syntaxError("for > 1").message, 'expected a number, a signal, "(", "-" or "not" at 0, found "for"');
  });
});

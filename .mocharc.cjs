// Mocha's configuration. `spec` lists the whole suite for `npx mocha` / `npm test`; when spec files
// are named on the command line (`npx mocha test/integration/replay.spec.ts`) only those run, since
// mocha would otherwise add them to the configured list and run everything.
const named = process.argv.slice(2).some((arg) => /\.spec\.ts$/.test(arg));

module.exports = {
  spec: named
    ? []
    : [
        "test/**/*.spec.ts",
        "coordinator/**/*.spec.ts",
        "cell-agent/**/*.spec.ts",
        "simulators/**/*.spec.ts",
        "firmware-pins/**/*.spec.ts",
        "protocol/**/*.spec.ts",
      ],
  extension: ["ts"],
  // Root hooks: fleets shared by several spec files stop after the last one (test/support/shared-fleet.ts);
  // every /v1 response the tests receive is checked against the OpenAPI document (test/support/openapi-capture.ts).
  require: ["test/support/root-hooks.ts", "test/support/openapi-capture.ts"],
  // Spec files and plugins load with import(), all as ES modules: with require(esm) on (Node >= 20.19),
  // mocha `require`s them, tsx turns each into CommonJS, and a spec whose graph has a top-level await
  // (the MuJoCo and zstd wasm loaders) fell back to import(): 37 spec files, and 601 modules loaded
  // twice (a CommonJS and an ESM copy, each compiled and initialised). Loading the whole suite
  // (`npx mocha --dry-run`) 16.5 -> 13.7 CPU-s.
  "node-option": ["import=tsx", "no-experimental-require-module"],
  timeout: 20000,
  reporter: "./test/summary-reporter.cjs",
};

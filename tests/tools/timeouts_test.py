#!/usr/bin/env python3
"""timeouts_test.py BUILD_DIR: every test of the suite has a timeout of its
own (ctest's TIMEOUT property), so that a hang fails in minutes rather than
holding the whole run: at least a second, at most ten minutes. A test added
after a directory's heapline_default_timeout(), or a gtest_discover_tests()
without PROPERTIES TIMEOUT, has none."""
import json
import subprocess
import sys

listing = subprocess.run(["ctest", "--test-dir", sys.argv[1], "--show-only=json-v1"], capture_output=True, text=True,
                         check=True).stdout
tests = json.loads(listing)["tests"]
problems = []
for test in tests:
    properties = {p["name"]: p["value"] for p in test.get("properties", [])}
    timeout = properties.get("TIMEOUT")
    if timeout is None:
        problems.append(f"{test['name']}: no TIMEOUT")
    elif not 1 <= float(timeout) <= 600:
        problems.append(f"{test['name']}: TIMEOUT {timeout} s, not from 1 s to 10 minutes")
for problem in problems:
    print(problem)
print(f"timeouts: {len(tests)} tests, {len(problems)} without a timeout of a few minutes at most")
sys.exit(1 if problems or len(tests) < 100 else 0)

#!/usr/bin/env bash
# npm test: every test, on two cores at once. Setup (SETUP_TESTS=1: also what only the
# tests use) with the build beside it, lint, then two halves side by side:
# - the main suite on the Temporal dev server, two files at a time, the long ones first
#   (.mocharc.cjs: --parallel; each worker has its own dev server and its own share of
#   the test ports);
# - the production Temporal server's half (npm run test:temporal-server), whose server is
#   built from source with Go first (minutes on a fresh machine, nothing once built): the
#   build overlaps the main suite instead of coming before it. Its output is kept in
#   test-output/temporal-server-half.log and printed when it ends.
# The rate limit service's Go reference builds meanwhile too.
# The exit status is non-zero when either half failed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-output

# The builds need no service: they run while setup starts them (their output follows setup's).
build_log=test-output/build.log
npm run build > "$build_log" 2>&1 &
build=$!
reference_log=test-output/ratelimit-reference-build.log
bash scripts/ratelimit-reference.sh build > "$reference_log" 2>&1 &
reference=$!
SETUP_TESTS=1 SETUP_TEMPORAL_SERVER=0 SETUP_RATELIMIT_REFERENCE=0 bash scripts/setup.sh
build_status=0
wait "$build" || build_status=$?
cat "$build_log"
[ "$build_status" -eq 0 ] || { echo "[test] the build failed (exit $build_status)"; exit "$build_status"; }
npm run lint
wait "$reference" || {
  cat "$reference_log"
  echo "[test] WARNING: the rate limit service's Go reference did not build; its conformance test will fail"
}

half_log=test-output/temporal-server-half.log
echo "[test] the production-server half runs beside the main suite; its output: $half_log"
# (Its test ports are a range of their own: test/support/ports.ts.)
TEST_PORTS_BESIDE_WORKERS=1 npm run --silent test:temporal-server > "$half_log" 2>&1 &
half=$!
trap 'kill "$half" 2>/dev/null || true' INT TERM

main_log=test-output/main-suite.log
main_status=0
npx mocha 2>&1 | tee "$main_log" || main_status=$?
if kill -0 "$half" 2>/dev/null; then
  echo "[test] main suite done; waiting for the production-server half (tail -f $half_log)"
fi
half_status=0
wait "$half" || half_status=$?

echo
echo "[test] ---- the production-server half (npm run test:temporal-server) ----"
cat "$half_log"
if [ "$main_status" -ne 0 ]; then
  # Repeated last, where a reader of the log's tail looks: mocha's account of each failure.
  echo
  echo "[test] ---- the main suite's failures again (whole output: $main_log) ----"
  awk '/^  [0-9]+ failing/ { on = 1 } /Slowest test files/ { on = 0 } on' "$main_log"
fi
echo "[test] main suite: exit $main_status; production-server half: exit $half_status"
[ "$main_status" -eq 0 ] && [ "$half_status" -eq 0 ]

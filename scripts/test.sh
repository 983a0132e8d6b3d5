#!/usr/bin/env bash
# npm test: every test, on two cores at once. Setup (SETUP_TESTS=1: also what only the
# tests use), a quick build (no type check) and lint, then two streams side by side:
# - the main suite: test/webhooks on the Temporal dev server, two files at a time, the
#   long ones first (.mocharc.cjs: --parallel; each worker has its own dev server and its
#   own share of the test ports);
# - every other folder one at a time (.mocharc.others.cjs), then the production Temporal
#   server's half (npm run test:temporal-server). That server is built from source with Go
#   (minutes on a fresh machine, nothing once built): the build starts with the stream and
#   overlaps the other folders' files. This stream's output is kept in
#   test-output/second-stream.log and printed when it ends.
# The type check runs beside the tests too (the tests run the same emitted code), and the
# rate limit service's Go reference builds while the build runs.
# The exit status is non-zero when the type check or any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-output

SETUP_TESTS=1 SETUP_TEMPORAL_SERVER=0 SETUP_RATELIMIT_REFERENCE=0 bash scripts/setup.sh
reference_log=test-output/ratelimit-reference-build.log
bash scripts/ratelimit-reference.sh build > "$reference_log" 2>&1 &
reference=$!
npm run build:unchecked
npm run lint
typecheck_log=test-output/typecheck.log
npm run --silent typecheck > "$typecheck_log" 2>&1 &
typecheck=$!
wait "$reference" || {
  cat "$reference_log"
  echo "[test] WARNING: the rate limit service's Go reference did not build; its conformance test will fail"
}

# The second stream: the other folders, then the production-server half. Both use a port
# range apart from the main suite's workers (test/support/ports.ts), one after the other.
second_stream() {
  local status=0 build
  bash scripts/temporal-server.sh build > test-output/temporal-server-build.log 2>&1 &
  build=$!
  echo "[test] ---- every folder but webhooks and production (.mocharc.others.cjs) ----"
  npx mocha --config .mocharc.others.cjs || status=1
  echo "[test] ---- the production-server half (npm run test:temporal-server) ----"
  wait "$build" || cat test-output/temporal-server-build.log
  npm run --silent test:temporal-server || status=$((status | 2))
  return "$status"
}
second_log=test-output/second-stream.log
echo "[test] the other folders, then the production-server half, run beside the main suite; their output: $second_log"
TEST_PORTS_BESIDE_WORKERS=1 second_stream > "$second_log" 2>&1 &
second=$!
trap 'kill "$second" "$typecheck" 2>/dev/null || true' INT TERM

main_log=test-output/main-suite.log
main_status=0
npx mocha 2>&1 | tee "$main_log" || main_status=$?
if kill -0 "$second" 2>/dev/null; then
  echo "[test] main suite done; waiting for the other folders and the production-server half (tail -f $second_log)"
fi
second_status=0
wait "$second" || second_status=$?
typecheck_status=0
wait "$typecheck" || typecheck_status=$?

echo
cat "$second_log"
if [ "$typecheck_status" -ne 0 ]; then
  echo "[test] ---- the type check (npm run typecheck) failed ----"
  cat "$typecheck_log"
fi
if [ "$main_status" -ne 0 ]; then
  # Repeated last, where a reader of the log's tail looks: mocha's account of each failure.
  echo
  echo "[test] ---- the main suite's failures again (whole output: $main_log) ----"
  awk '/^  [0-9]+ failing/ { on = 1 } /Slowest test files/ { on = 0 } on' "$main_log"
fi
case "$second_status" in
  0) second_said="passed" ;;
  1) second_said="other folders failed" ;;
  2) second_said="production-server half failed" ;;
  *) second_said="other folders and production-server half failed" ;;
esac
echo "[test] type check: exit $typecheck_status; main suite: exit $main_status; second stream: $second_said"
[ "$typecheck_status" -eq 0 ] && [ "$main_status" -eq 0 ] && [ "$second_status" -eq 0 ]

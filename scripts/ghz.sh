#!/usr/bin/env bash
# ghz, a gRPC load generator in Go, built from the Go module proxy into a cache outside the
# repository, for the rate limit bench's paced (open-loop) runs: it spaces calls evenly at a
# fixed rate, as the research this service was measured against did. Not needed by the tests.
#
#   scripts/ghz.sh build   build once (about 15 s cold, instant after)
#   scripts/ghz.sh path    print the binary's path (exit 1 if not built)
set -euo pipefail

VERSION="v0.93.0" # the only version the module proxy serves here
BIN="${GHZ_HOME:-/var/tmp/etp-services/ghz}/$VERSION/ghz"

case "${1:-}" in
  build)
    if [[ -x "$BIN" ]]; then
      echo "[ghz] ready: $BIN" >&2
      exit 0
    fi
    command -v go >/dev/null || { echo "[ghz] Go is not installed: ghz cannot be built" >&2; exit 1; }
    mkdir -p "$(dirname "$BIN")"
    GOTOOLCHAIN=auto GOBIN="$(dirname "$BIN")" GOFLAGS=-mod=mod go install "github.com/bojand/ghz/cmd/ghz@$VERSION"
    echo "[ghz] ready: $BIN" >&2
    ;;
  path)
    [[ -x "$BIN" ]] || exit 1
    echo "$BIN"
    ;;
  *)
    echo "usage: $0 build|path" >&2
    exit 2
    ;;
esac

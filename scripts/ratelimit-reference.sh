#!/usr/bin/env bash
# The Go reference of the rate limit service (envoyproxy/ratelimit), built from the Go
# module proxy into a cache outside the repository, for the conformance test and the
# bench's side-by-side runs. The proxy serves one version of the module; it is pinned here.
#
#   scripts/ratelimit-reference.sh build   build once (a few minutes cold, instant after)
#   scripts/ratelimit-reference.sh path    print the binary's path (exit 1 if not built)
set -euo pipefail

VERSION="v1.4.1-0.20260122083618-3fb702589d36"
HOME_DIR="${RATELIMIT_REFERENCE_HOME:-/var/tmp/etp-services/ratelimit-reference}/$VERSION"
BIN="$HOME_DIR/service_cmd"

log() { echo "[ratelimit-reference] $*" >&2; }

case "${1:-}" in
  build)
    if [[ -x "$BIN" ]]; then
      log "ready: $BIN ($VERSION)"
      exit 0
    fi
    if ! command -v go >/dev/null; then
      log "Go is not installed: the reference cannot be built (the conformance test skips)"
      exit 0
    fi
    log "building github.com/envoyproxy/ratelimit $VERSION from the Go module proxy (a few minutes the first time)"
    started=$(date +%s)
    mkdir -p "$HOME_DIR"
    GOTOOLCHAIN=auto GOBIN="$HOME_DIR" GOFLAGS=-mod=mod \
      go install "github.com/envoyproxy/ratelimit/src/service_cmd@$VERSION"
    log "ready in $(($(date +%s) - started)) s: $BIN"
    ;;
  path)
    [[ -x "$BIN" ]] || exit 1
    echo "$BIN"
    ;;
  version)
    echo "$VERSION"
    ;;
  *)
    echo "usage: $0 build|path|version" >&2
    exit 2
    ;;
esac

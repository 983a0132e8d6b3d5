#!/usr/bin/env bash
# The tools of the generated client libraries (clients/), pinned:
# - .tools/client-tools-venv: openapi-python-client with ruff (generates clients/python's
#   generated part: scripts/generate-clients.ts) and hatchling (builds its wheel), from
#   clients/python/generator-requirements.txt;
# - .tools/client-wheels: the wheels a fresh virtual environment needs to install the Python
#   client and run its tests (clients/python/test-requirements.txt), so that the tests do
#   not reach PyPI.
# Idempotent: each is redone only when its requirements file changed (a fraction of a second
# otherwise). Called by scripts/setup.sh (SETUP_TESTS=1); by hand: `bash scripts/client-tools.sh`.
# CLIENT_TOOLS_PYTHON picks the interpreter (3.11 or newer: the generated client needs it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${CLIENT_TOOLS_PYTHON:-python3}"
VENV="$ROOT/.tools/client-tools-venv"
WHEELS="$ROOT/.tools/client-wheels"
GENERATOR_REQS="$ROOT/clients/python/generator-requirements.txt"
TEST_REQS="$ROOT/clients/python/test-requirements.txt"

log() { printf '[client-tools] %s\n' "$*" >&2; }
fail() { printf '[client-tools] ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null ||
  fail "no Python interpreter '$PYTHON' on PATH: install Python 3.11+ (with pip and venv) or set CLIENT_TOOLS_PYTHON"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  fail "$PYTHON is $("$PYTHON" -V 2>&1); the generated Python client needs 3.11 or newer (set CLIENT_TOOLS_PYTHON)"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
  fail "$PYTHON lacks the venv or ensurepip module (Debian: apt-get install python3-venv)"

stamp() { sha256sum "$1" | cut -d' ' -f1; }

# A venv moved from another checkout keeps that checkout's paths in its scripts: rebuild it.
if [[ "$(cat "$VENV/.requirements" 2>/dev/null)" != "$(stamp "$GENERATOR_REQS")" ]] ||
  ! "$VENV/bin/openapi-python-client" --version >/dev/null 2>&1; then
  log "installing openapi-python-client, ruff and hatchling into .tools/client-tools-venv (PyPI)"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" || fail "$PYTHON -m venv $VENV failed"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$GENERATOR_REQS" ||
    fail "pip install -r clients/python/generator-requirements.txt failed (is PyPI reachable?)"
  stamp "$GENERATOR_REQS" >"$VENV/.requirements"
fi

if [[ "$(cat "$WHEELS/.requirements" 2>/dev/null)" != "$(stamp "$TEST_REQS")" ]]; then
  log "downloading the Python client's test wheels into .tools/client-wheels (PyPI)"
  rm -rf "$WHEELS"
  "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    -d "$WHEELS" -r "$TEST_REQS" ||
    fail "pip download -r clients/python/test-requirements.txt failed (is PyPI reachable?)"
  stamp "$TEST_REQS" >"$WHEELS/.requirements"
fi
log "ready: .tools/client-tools-venv ($("$VENV/bin/openapi-python-client" --version)), .tools/client-wheels"

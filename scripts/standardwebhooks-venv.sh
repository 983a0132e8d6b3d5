#!/usr/bin/env bash
# Installs the pinned `standardwebhooks` package from PyPI (the Standard Webhooks project's
# own Python verifier) into .tools/standardwebhooks-venv, for the test whose receiver checks
# deliveries with it (test/webhooks/standard-webhooks.test.ts). Idempotent: an environment
# that already holds the pinned version is left alone. Called by scripts/setup.sh; run it by
# hand with `bash scripts/standardwebhooks-venv.sh`. STANDARDWEBHOOKS_PYTHON picks the interpreter.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Keep in step with PYTHON_LIBRARY_VERSION in test/support/standard-webhooks-receiver.ts.
VERSION=1.1.0
PYTHON="${STANDARDWEBHOOKS_PYTHON:-python3}"
VENV="$ROOT/.tools/standardwebhooks-venv"

log() { printf '[standardwebhooks-venv] %s\n' "$*" >&2; }
fail() { printf '[standardwebhooks-venv] ERROR: %s\n' "$*" >&2; exit 1; }

installed() {
  [[ -x "$VENV/bin/python" ]] &&
    [[ "$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("standardwebhooks"))' 2>/dev/null)" == "$VERSION" ]]
}

installed && exit 0
command -v "$PYTHON" >/dev/null ||
  fail "no Python interpreter '$PYTHON' on PATH: install Python 3.8+ (with pip and venv) or set STANDARDWEBHOOKS_PYTHON"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
  fail "$PYTHON lacks the venv or ensurepip module (Debian: apt-get install python3-venv)"
log "installing standardwebhooks $VERSION into .tools/standardwebhooks-venv (PyPI)"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" || fail "$PYTHON -m venv $VENV failed"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "standardwebhooks==$VERSION" ||
  fail "pip install standardwebhooks==$VERSION failed (is PyPI reachable?)"
installed || fail "$VENV does not report standardwebhooks $VERSION after the install"
log "ready: standardwebhooks $VERSION in .tools/standardwebhooks-venv"

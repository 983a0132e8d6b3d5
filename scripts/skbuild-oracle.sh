#!/usr/bin/env bash
# Installs the pinned scikit-build-core releases that the settings validator's differential
# test and benchmark use as the oracle, each in its own virtual environment under
# .tools/skbuild-venv-<version>. Idempotent: an environment that already imports the pinned
# version is left alone (a fraction of a second). Called by scripts/setup.sh; run it by hand
# with `bash scripts/skbuild-oracle.sh`. SKBUILD_ORACLE_PYTHON picks the interpreter.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Keep in step with ORACLE_RELEASES in test/skbuild-settings/oracle/upstream.ts.
VERSIONS=(0.12.2 1.1.2)
PYTHON="${SKBUILD_ORACLE_PYTHON:-python3}"

log() { printf '[skbuild-oracle] %s\n' "$*" >&2; }
fail() { printf '[skbuild-oracle] ERROR: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null ||
  fail "no Python interpreter '$PYTHON' on PATH: install Python 3.8+ (with pip and venv) or set SKBUILD_ORACLE_PYTHON"
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
  fail "$PYTHON lacks the venv or ensurepip module (Debian: apt-get install python3-venv)"

for version in "${VERSIONS[@]}"; do
  venv="$ROOT/.tools/skbuild-venv-$version"
  if [[ -x "$venv/bin/python" ]] &&
    [[ "$("$venv/bin/python" -c 'import scikit_build_core; print(scikit_build_core.__version__)' 2>/dev/null)" == "$version" ]]; then
    continue
  fi
  log "installing scikit-build-core $version into .tools/skbuild-venv-$version (PyPI)"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv" || fail "$PYTHON -m venv $venv failed"
  "$venv/bin/python" -m pip --version >/dev/null 2>&1 ||
    fail "the new virtual environment has no pip (Debian: apt-get install python3-venv python3-pip)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "scikit-build-core==$version" ||
    fail "pip install scikit-build-core==$version failed (is PyPI reachable?)"
done
log "ready: scikit-build-core ${VERSIONS[*]} in .tools/skbuild-venv-*"

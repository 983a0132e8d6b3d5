"""Reads [tool.scikit-build] settings with scikit-build-core's own SettingsReader, as the
build backend does (tomllib on the file's bytes, SettingsReader(..., state=...), then
validate_may_exit()), for many documents in one process.

Input on stdin, one JSON object per line:
  {"id": ..., "toml_b64": <the pyproject.toml bytes, base64>, "state": "wheel", "env": {...},
   "retry": false, "from_sdist": false, "system_cmake": ["3.28.1"]}
Output on stdout, one JSON object per line:
  {"id": ..., "ok": true, "settings": {<selected effective values>}}
  {"id": ..., "ok": false, "error": "<what upstream said>", "unrecognized": [...]}
The first output line is {"facts": {...}}: the interpreter facts that overrides test, so the
caller can give our evaluator the same build context. With `--rounds N` it answers nothing per
document but reads the whole batch N times and prints {"round_seconds": [...]} (the benchmark).

Facts a build takes from the machine are fixed per document where the caller must control
them: the environment (os.environ is replaced), the CMake found on the system (a stub of the
search), and PKG-INFO in the working directory (from-sdist). Whether a CMake wheel exists is
this machine's fact, reported with the others.
"""

import base64
import contextlib
import dataclasses
import io
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import scikit_build_core
from scikit_build_core.settings import skbuild_overrides
from scikit_build_core.settings.skbuild_read_settings import SettingsReader

try:
    import tomllib
except ImportError:  # Python < 3.11
    from scikit_build_core._compat import tomllib

CONTEXT = {"system_cmake": []}


class _Found:
    def __init__(self, version):
        self.version = version
        self.cmake_path = "/usr/bin/cmake"


class _SystemCMake:
    """Stands in for the CMake search: the caller says which CMake versions exist."""

    @classmethod
    def default_search(cls, *, version=None, module=True, env=None):
        from packaging.version import Version

        for found in CONTEXT["system_cmake"]:
            if version is None or version.contains(Version(found), prereleases=True):
                return _Found(found)
        raise skbuild_overrides.CMakeNotFoundError("no system CMake (stubbed)")


skbuild_overrides.CMake = _SystemCMake


def _facts():
    info = sys.implementation.version
    impl = f"{info.major}.{info.minor}.{info.micro}"
    if info.releaselevel != "final":
        impl += f"{info.releaselevel[0]}{info.serial}"
    return {
        "backend_version": scikit_build_core.__version__,
        "python_version": ".".join(str(x) for x in sys.version_info[:2]),
        "implementation_name": sys.implementation.name,
        "implementation_version": impl,
        "platform_system": sys.platform,
        "platform_machine": platform.machine(),
        "platform_node": platform.node(),
        "abi_flags": skbuild_overrides.get_abi_flags(),
        "cmake_wheel": bool(
            skbuild_overrides.override_match(
                current_env={}, current_state="wheel", has_dist_info=False, retry=False, cmake_wheel=True
            )[0]
        ),
    }


def _plain(value):
    """Settings values as JSON: versions, specifiers and paths as strings."""
    if dataclasses.is_dataclass(value):
        return {f.name.replace("_", "-"): _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)


def read_one(request, dirs):
    CONTEXT["system_cmake"] = request.get("system_cmake", [])
    os.environ.clear()
    os.environ.update(request.get("env", {}))
    os.chdir(dirs["sdist" if request.get("from_sdist") else "tree"])
    out = io.StringIO()
    reader = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            pyproject = tomllib.loads(base64.b64decode(request["toml_b64"]).decode("utf-8"))
            reader = SettingsReader(
                pyproject,
                {},
                state=request.get("state", "wheel"),
                retry=request.get("retry", False),
                env=dict(os.environ),
            )
            reader.validate_may_exit()
        return {"id": request["id"], "ok": True, "settings": _plain(reader.settings)}
    except BaseException as err:  # SystemExit from rich_error, TypeError, ExceptionGroup, ...
        if isinstance(err, KeyboardInterrupt):
            raise
        text = out.getvalue().strip()
        detail = f"{type(err).__name__}: {err}"
        notes = getattr(err, "__notes__", None) or []
        for sub in getattr(err, "exceptions", []):
            notes += [f"{type(sub).__name__}: {sub}", *(getattr(sub, "__notes__", None) or [])]
        unrecognized = list(reader.unrecognized_options()) if reader is not None else []
        return {
            "id": request["id"],
            "ok": False,
            "error": "\n".join(x for x in [text, detail, *notes] if x),
            "unrecognized": unrecognized,
        }


def main():
    base = Path(tempfile.mkdtemp(prefix="skbuild-oracle-"))
    dirs = {"tree": base / "tree", "sdist": base / "sdist"}
    for d in dirs.values():
        d.mkdir()
        (d / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.15)\nproject(x)\n")
    (dirs["sdist"] / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: x\nVersion: 1\n")
    sys.stdout.write(json.dumps({"facts": _facts()}) + "\n")
    sys.stdout.flush()
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
        requests = [json.loads(line) for line in sys.stdin if line.strip()]
        for request in requests:  # warm-up: imports and caches, as in a long-lived reader
            read_one(request, dirs)
        seconds = []
        for _ in range(rounds):
            start = time.perf_counter()
            for request in requests:
                read_one(request, dirs)
            seconds.append(time.perf_counter() - start)
        sys.stdout.write(json.dumps({"round_seconds": seconds}) + "\n")
        return
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(read_one(json.loads(line), dirs)) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()

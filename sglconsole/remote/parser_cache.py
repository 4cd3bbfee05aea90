"""What the host's SGLang parser said, kept per (host, interpreter, SGLang version, argv).

Asking it costs an import of SGLang and torch on the host (about 12 s on a real H200 box), and its
answer depends on nothing else, so it is paid once: in memory for the monitor, and on disk
($XDG_STATE_HOME/sglconsole/parser-cache/, 0600) so that the next `status` or restore of the same
launch answers at once. Only successful verdicts are kept; an error is asked again next time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path

from sglconsole.config.paths import state_dir
from sglconsole.remote.sglang_args import Canonical, Verdict, canonicalize_remote

CACHE_FORMAT = 2  # 2: the verdict carries the host's environment registry

# Finds the installed SGLang's version without importing it (locating a package imports nothing:
# milliseconds where importing SGLang takes seconds). First the wheel's own record, the
# `Version:` of the sglang-X.dist-info/METADATA beside the package: since 0.5.13 version.py only
# imports _version.py, and its literal fallback "0.0.0.dev0" would make every release one key.
# Then the literals of _version.py and version.py (an older wheel, a source tree), never that
# fallback; then importlib.metadata (3.8+: an editable install keeps its dist-info elsewhere).
# Runs on the host's python3: stdlib only, Python 3.6 syntax.
VERSION_PROBE = r"""
import glob, importlib.util, os, re
spec = importlib.util.find_spec("sglang")
where = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None
found = ""
def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except (IOError, OSError):
        return ""
if where:
    site = os.path.dirname(where)
    for meta in sorted(glob.glob(os.path.join(site, "sglang-*.dist-info", "METADATA"))):
        line = re.search(r"^Version:[ \t]*(\S+)", read(meta), re.MULTILINE)
        found = found or (line.group(1) if line else "")
    for name in ("_version.py", "version.py"):
        for literal in re.findall(r"__version__\s*=\s*(?:version\s*=\s*)?[\"']([^\"']+)",
                                  read(os.path.join(where, name))):
            if not literal.startswith("0.0.0"):
                found = found or literal
if where and not found:
    try:
        import importlib.metadata
        found = importlib.metadata.version("sglang") or ""
    except Exception:
        pass
print(found)
"""


async def installed_version(ssh, python: str | list[str]) -> str | None:
    """The SGLang version `python` on the host would import, without importing it (None if the
    package or its version file is not found: then nothing is cached)."""
    try:
        runner = [python] if isinstance(python, str) else list(python)  # a list: in an image
        timeout = 15 if isinstance(python, str) else 60  # starting a container takes longer
        result = await ssh.run([*runner, "-c", VERSION_PROBE], timeout=timeout)
    except Exception:  # noqa: BLE001 - only a cache key: the full check still runs
        return None
    version = result.stdout.strip() if result.exit_status == 0 else ""
    return version or None


async def canonicalize_cached(
    cache: ParserCache,
    ssh,
    python: str | list[str],
    argvs: dict[str, list[str]],
    *,
    version: str | None = None,
) -> Verdict:
    """The host parser's verdict on `argvs`, from the cache when this SGLang already answered
    (`version`: the installed one, when the caller already asked)."""
    version = version or await installed_version(ssh, python)
    key = cache.key(
        ssh.name, python if isinstance(python, str) else shlex.join(python), version, argvs
    )
    cached = cache.get(key)
    if cached is not None:  # written when it was asked: not again (~20 ms a verdict)
        return cached
    verdict = await canonicalize_remote(ssh, python, argvs)
    cache.put(key, verdict)
    return verdict


class ParserCache:
    def __init__(self, folder: Path | None = None):
        self.folder = folder or state_dir() / "parser-cache"
        self._memory: dict[str, Verdict] = {}

    @staticmethod
    def key(host: str, python: str, version: str | None, argvs: dict[str, list[str]]) -> str | None:
        if not version:
            return None  # without the version an upgrade in place would be answered from the past
        text = json.dumps([CACHE_FORMAT, host, python, version, argvs], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str | None) -> Verdict | None:
        if key is None:
            return None
        if key in self._memory:
            return self._memory[key]
        try:
            verdict = _decode(json.loads((self.folder / f"{key}.json").read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self._memory[key] = verdict
        return verdict

    def put(self, key: str | None, verdict: Verdict) -> None:
        if key is None or not verdict.ok:
            return
        self._memory[key] = verdict
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = self.folder / f"{key}.json"
            descriptor = os.open(
                path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600
            )
            with os.fdopen(descriptor, "w") as handle:
                json.dump(_encode(verdict), handle)
            os.replace(path.with_suffix(".tmp"), path)
        except OSError:
            pass  # a read-only home: the memory copy still saves this run


def _encode(verdict: Verdict) -> dict:
    return {
        "version": verdict.version,
        "python": verdict.python,
        "actions": verdict.actions,
        "env_registry": verdict.env_registry,
        "results": {
            side: {"values": result.values, "given": sorted(result.given), "error": result.error}
            for side, result in verdict.results.items()
        },
    }


def _decode(data: dict) -> Verdict:
    results = {
        side: Canonical(result["values"], set(result["given"]), result["error"])
        for side, result in data["results"].items()
    }
    return Verdict(
        True,
        data["version"],
        data["python"],
        data["actions"],
        results,
        env_registry=data.get("env_registry"),
    )

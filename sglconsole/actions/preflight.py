"""Preflight: check a launch spec against a host without touching anything.

The host's own SGLang (the spec's interpreter) parses the very argv that will
launch; then the version requirement, the model path, the interpreter, the log
folder, the port and the GPUs are checked. Every problem is reported, not just
the first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable
from dataclasses import dataclass, field

from sglconsole.config.flag_history import explain
from sglconsole.config.launch_spec import LaunchSpec
from sglconsole.core.drift import check_version
from sglconsole.core.flag_hints import did_you_mean
from sglconsole.remote.container_engine import by_id, image_id_of
from sglconsole.remote.inspect import Snapshot
from sglconsole.remote.parser_cache import ParserCache, canonicalize_cached
from sglconsole.remote.sglang_args import Verdict, error_line
from sglconsole.remote.ssh.connection import SshHost

PATHS_SNIPPET = r"""
import json, os, sys
req = json.loads(sys.argv[1])
out = {}
model = req.get("model")
if model:
    out["model"] = os.path.exists(model) or not model.startswith(("/", "~", "."))
workdir = req.get("workdir")
if workdir:
    out["workdir"] = os.path.isdir(os.path.expanduser(workdir))
log = req.get("log")
if log:
    folder = os.path.dirname(os.path.expanduser(log)) or "."
    probe = folder
    while probe and not os.path.isdir(probe):
        probe = os.path.dirname(probe)
    out["log"] = os.access(probe or "/", os.W_OK)
if model and out.get("model") and os.path.isdir(model):
    import re
    for name in ("README.md", "config.json"):
        try:
            with open(os.path.join(model, name), errors="replace") as handle:
                text = handle.read(1000000)
            found = re.search(r"sglang\s*>=\s*v?([0-9]+(?:\.[0-9]+)+)", text, re.I)
        except Exception:
            continue
        if found:
            out["card"] = [found.group(1), name]
            break
print(json.dumps(out))
"""


@dataclass
class Check:
    name: str
    passed: bool
    detail: str
    warning: bool = False
    """Passed, but worth reading first (the model card asks for a newer SGLang than the host's)."""


@dataclass
class Preflight:
    checks: list[Check] = field(default_factory=list)
    verdict: Verdict | None = None
    spec: LaunchSpec | None = None
    """What was checked: the spec the launch is then given."""

    @property
    def ok(self) -> bool:
        return all(check.passed for check in self.checks)

    def failures(self) -> list[Check]:
        return [check for check in self.checks if not check.passed]

    def lines(self) -> list[str]:
        return [
            f"{'FAIL' if not check.passed else 'WARN' if check.warning else 'ok  '} {check.name}:"
            f" {check.detail}"
            for check in self.checks
        ]


@dataclass(frozen=True)
class HostAnswers:
    """What preflight asks the host itself (read-only; the snapshot is not needed for it)."""

    verdict: Verdict
    """The host's SGLang on the very argv that will launch."""
    paths: list[Check]
    """The model path, the workdir and the log folder, as the host sees them."""


async def ask_host(ssh: SshHost, spec: LaunchSpec) -> HostAnswers:
    # the host parser imports SGLang and torch (~12 s on a real host): asked once per version
    checks = []
    if spec.container is not None:  # the image's SGLang, in a throwaway container: it must be there
        checks = [await image_check(ssh, spec), await name_check(ssh, spec)]
        if not checks[0].passed:
            return HostAnswers(Verdict(False, None, spec.python, {}, {}, checks[0].detail), [])
    verdict = await canonicalize_cached(ParserCache(), ssh, spec.runner, {"profile": spec.args})
    if not verdict.ok:
        return HostAnswers(verdict, checks)
    model = verdict.results["profile"].values.get("model_path")
    return HostAnswers(verdict, checks + await _paths(ssh, spec, model))


async def run_preflight(
    ssh: SshHost, spec: LaunchSpec, snap: Snapshot, asked: Awaitable[HostAnswers] | None = None
) -> Preflight:
    """ASKED: `ask_host(ssh, spec)` already under way (started beside the snapshot)."""
    result = Preflight(spec=spec)
    missing = spec.unresolved
    if missing:
        result.checks.append(
            Check(
                "environment",
                False,
                "the profile uses "
                + ", ".join(f"${{{name}}}" for name in missing)
                + " but your environment does not set it",
            )
        )
    argv = spec.args
    answers = await (asked if asked is not None else ask_host(ssh, spec))
    verdict = answers.verdict
    result.verdict = verdict
    if not verdict.ok:
        result.checks += answers.paths
        result.checks.append(Check("sglang", False, verdict.error or "SGLang could not be asked"))
        return result
    where = f" in {spec.container.runs}" if spec.container else ""
    result.checks.append(
        Check("interpreter", True, f"{spec.python}{where}: SGLang {verdict.version}")
    )
    canonical = verdict.results["profile"]
    if canonical.error:
        result.checks.append(Check("arguments", False, refusal(canonical.error, verdict)))
    else:
        result.checks.append(
            Check("arguments", True, f"{len(argv)} arguments valid for SGLang {verdict.version}")
        )
    version_ok = check_version(verdict.version, spec.requires_sglang)
    if version_ok is not None:
        verb = "satisfies" if version_ok else "does not satisfy"
        result.checks.append(
            Check("version", version_ok, f"SGLang {verdict.version} {verb} {spec.requires_sglang}")
        )
    result.checks += [_card(check, verdict.version) if check.name == "card" else check
                      for check in answers.paths]  # fmt: skip
    result.checks += _port(spec.port, snap)
    result.checks += _gpus(spec, snap)
    return result


def refusal(error: str, verdict: Verdict) -> str:
    """argparse's verdict, and for each flag or value an older SGLang took: the release that
    removed it and SGLang's own replacement (from the shipped tables); else the nearest flag."""
    notes = explain(error, verdict.version)
    explained = {word for note in notes for word in re.findall(r"`(--[\w-]+)`", note)}
    hint = did_you_mean(error, verdict.all_flags(), skip=explained)
    last = error_line(error)
    return "; ".join([last + (f" ({hint})" if hint else ""), *notes])


async def _paths(ssh: SshHost, spec: LaunchSpec, model: object) -> list[Check]:
    request = {
        "model": model if isinstance(model, str) else None,
        "workdir": spec.cwd,
        # only a configured log: the default one's folder is /tmp
        "log": spec.log_setting,
    }
    run = await ssh.run([*spec.runner, "-c", PATHS_SNIPPET, json.dumps(request)], timeout=60)
    try:
        found = json.loads(run.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [Check("paths", False, f"could not check paths: {run.stderr.strip()[-200:]}")]
    checks = []
    if "model" in found:
        checks.append(
            Check(
                "model",
                found["model"],
                f"{model} {'exists' if found['model'] else 'does not exist'}",
            )
        )
    if "workdir" in found:
        checks.append(
            Check(
                "workdir",
                found["workdir"],
                f"{spec.cwd} {'exists' if found['workdir'] else 'is missing'}",
            )
        )
    if found.get("card"):  # judged against the host's version by run_preflight (_card)
        checks.append(Check("card", True, " ".join(found["card"])))
    if "log" in found:
        checks.append(
            Check(
                "log",
                found["log"],
                f"{spec.log}: folder {'writable' if found['log'] else 'not writable'}",
            )
        )
    return checks


def _card(found: Check, version: str | None) -> Check:
    """The model card's minimum SGLang against the host's: a hint, never a refusal (the card may
    be stale); the one that ended the seed story's hunt for degenerate output."""
    minimum, name = found.detail.split(" ", 1)
    older = version is not None and check_version(version, f">={minimum}") is False
    detail = f"{name} asks for sglang>={minimum}"
    if older:
        detail += (
            f"; the host's SGLang {version} is older: its output may be wrong"
            " (`sglconsole upgrade HOST:PORT --to VERSION`)"
        )
    return Check("model card", True, detail, warning=older)


def _port(port: int, snap: Snapshot) -> list[Check]:
    mine = snap.server(port)
    if port not in snap.ports:
        return [Check("port", True, f"{port} is free")]
    if mine is not None:
        return [
            Check(
                "port", True, f"{port} is held by the server being replaced (pid {mine.main.pid})"
            )
        ]
    return [Check("port", False, f"{port} is in use by a process that is not an SGLang server")]


def _gpus(spec: LaunchSpec, snap: Snapshot) -> list[Check]:
    if not spec.gpus:
        return []
    mine = snap.server(spec.port)
    members = {mine.main.pid, *(child.pid for child in mine.children)} if mine else set()
    by_index = {gpu.index: gpu for gpu in snap.gpus}
    by_design = {app.pid for cache in snap.view.weight_caches for app in cache.held}
    checks = []
    for index in spec.gpus:
        gpu = by_index.get(index)
        if gpu is None:
            checks.append(
                Check(
                    f"gpu {index}",
                    False,
                    f"GPU {index} does not exist on this host ({len(snap.gpus)} GPUs)",
                )
            )
            continue
        others = [app for app in snap.apps if app.gpu_uuid == gpu.uuid and app.pid not in members]
        if snap.view.foreign_pids:
            others = []
            held_by_mine = mine is not None and index in mine.gpus
            if not held_by_mine and (gpu.mem_used_mib or 0) > 2048:
                checks.append(
                    Check(
                        f"gpu {index}",
                        False,
                        f"GPU {index} has {gpu.mem_used_mib} MiB in use"
                        " by processes this host cannot see",
                    )
                )
                continue
        kept = [app for app in others if app.pid in by_design]  # weight-cache daemons: on purpose
        others = [app for app in others if app.pid not in by_design]
        if others:
            holders = ", ".join(
                f"pid {app.pid} ({app.process_name}, {app.used_mib} MiB)" for app in others
            )
            checks.append(Check(f"gpu {index}", False, f"GPU {index} is held by {holders}"))
        else:
            checks.append(
                Check(
                    f"gpu {index}",
                    True,
                    f"GPU {index} is free"
                    + (" or held only by the server being replaced" if mine else "")
                    + "".join(
                        f"; weight-cache daemon pid {app.pid} keeps {app.used_mib} MiB"
                        " on it by design"
                        for app in kept
                    ),
                )
            )
    return checks


async def image_check(ssh: SshHost, spec: LaunchSpec) -> Check:
    """The image a container launch runs is on the host (nothing is pulled behind your back)."""
    run = spec.container
    found = await image_id_of(ssh, run.engine, run.runs)
    if found is None:
        return Check(
            "image",
            False,
            f"{run.engine} has no image {run.runs} on {spec.host}"
            + (f" (the profile's {run.image} names it)" if run.image_id else "")
            + f": `{run.engine} pull` it first",
        )
    return Check("image", True, f"{run.runs} is present ({found[:19]})")


async def name_check(ssh: SshHost, spec: LaunchSpec) -> Check:
    """The container's predictable name is free, or held by the server being replaced (which is
    renamed, kept for rollback, before the new one starts)."""
    run = spec.container
    held = await by_id(ssh, run.engine, run.name)  # inspect takes a name as well as an id
    if held is None:
        return Check("name", True, f"container name {run.name} is free")
    if held.running and held.port == spec.port:
        return Check("name", True, f"{run.name} is the container being replaced ({held.id[:12]})")
    state = "running" if held.running else held.state or "stopped"
    return Check(
        "name",
        False,
        f"container name {run.name} is taken by {held.id[:12]} ({state}, not this server):"
        f" rename or remove it first",
    )

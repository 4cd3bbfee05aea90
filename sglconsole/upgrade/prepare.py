"""The one answer to "what would `upgrade HOST:PORT --to VERSION` do?": the host's SGLang and the
model card read (read-only), the profile translated, where VERSION will live, and every remote
command, as one record. The CLI prints it (and --dry-run stops there), the TUI's confirmation
shows its lines, and the run is given this very record."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.actions.upgrade.install import Install, plan_install
from sglconsole.config.flag_tables import release_of
from sglconsole.config.launch_spec import MODULE, launch_spec
from sglconsole.config.upgrade import Translation, translate
from sglconsole.config.upgrade.options import split
from sglconsole.core.flag_table import version_key
from sglconsole.remote.model_card import ModelCard, read_model_card
from sglconsole.remote.parser_cache import installed_version

AFTER = (
    "then: probe its answer, A/B bench at the baseline's concurrencies; promote (hosts.yaml points"
    " at the new profile, the old one kept) or roll back to what runs now"
)


BESIDE = (
    "then: probe its answer, A/B bench at the baseline's concurrencies, stop it; only if it passed:"
    " restore the new profile on the server's own GPUs (rolled back if that fails) and promote it"
)


@dataclass(frozen=True, kw_only=True)
class Prepared:
    host: str
    port: int
    profile: str
    current: str
    """The SGLang the server's interpreter has now."""
    card: ModelCard
    translation: Translation
    install: Install
    commands: tuple[str, ...]
    """Every remote command that changes the host, in order (the canary's launch last)."""
    gpus: tuple[int, ...] = ()
    """--gpus: the canary runs there, beside the old server, on a port of its own."""

    @property
    def target(self) -> str:
        return f"{self.host}:{self.port}"

    def card_json(self) -> dict:
        minimum = self.card.min_sglang
        return {
            "architecture": self.card.architecture,
            "min_sglang": minimum,
            "file": self.card.card,
            "host_older": older(self.current, minimum),
            "target_older": older(self.translation.to_version, minimum),
        }

    def card_line(self) -> str | None:
        if not self.card.min_sglang:
            return None
        line = f"model card ({self.card.card}): sglang>={self.card.min_sglang}"
        if older(self.current, self.card.min_sglang):
            line += f"; the host's {self.current} is older"
        if older(self.translation.to_version, self.card.min_sglang):
            line += f"; {self.translation.to_version} is older too"
        return line

    def report(self, dry_run: bool) -> dict:
        return {
            "target": self.target,
            "profile": self.profile,
            "from_version": self.current,
            "to_version": self.translation.to_version,
            "model_card": self.card_json(),
            "python": self.install.python,
            "venv": self.install.venv,
            "translation": self.translation.to_dict(),
            "commands": list(self.commands),
            "dry_run": dry_run,
            "verdict": None,
        }

    def lines(self) -> list[str]:
        """The confirmation: the translation by meaning (changes first, each with its reason),
        then exactly what will run."""
        translation = self.translation
        out = [f"profile {self.profile}: SGLang {self.current} -> {translation.to_version}"]
        out += [self.card_line()] if self.card_line() else []
        for change in translation.changed:
            old, new = " ".join(change.old) or "-", " ".join(change.new) or "-"
            out.append(
                f"{change.kind}: {old} -> {new}" + (f"  ({change.reason})" if change.reason else "")
            )
        kept = len(translation.changes) - len(translation.changed)
        out.append(f"kept as written: {kept} options and variables")
        out += [f"note: {note}" for note in translation.notes]
        out += [f"run: {command}" for command in self.commands[:-1]]
        if self.gpus:
            where = ",".join(map(str, self.gpus))
            out.append(
                f"canary on GPU {where}, beside the old server (which keeps serving), on the first"
                f" free port from {self.port + 100}: {self.commands[-1]}"
            )
            out.append(BESIDE)
        else:
            out.append(f"canary on the same GPUs: {self.commands[-1]}")
            out.append(AFTER)
        return out


def older(version: str, minimum: str | None) -> bool | None:
    if minimum is None:
        return None
    return version_key(release_of(version)) < version_key(minimum)


def model_path(args: list[str] | tuple[str, ...], version: str) -> str | None:
    for option in split(args, version):
        if option.flag in ("--model-path", "--model") and option.values:
            return option.values[0]
    return None


async def prepare(
    ctx: ActionContext,
    host: str,
    port: int,
    version: str,
    python: str | None = None,
    gpus: tuple[int, ...] = (),
) -> Prepared:
    """Read-only: raises StageFailed where the host's SGLang cannot be read."""
    cfg = ctx.config
    name = cfg.server(host, port).profile
    profile = cfg.profiles[name]
    spec = launch_spec(cfg, host, port)
    if spec.container is not None:  # its SGLang is the image's: another release is another image
        raise StageFailed(
            f"profile {name!r} runs in a {spec.container.engine} container: another SGLang is"
            " another image (set its container.image and image_id, then restore; preflight"
            " asks the new image's SGLang first)"
        )
    ssh = ctx.ssh[host]
    current = await installed_version(ssh, spec.python)
    if current is None:
        raise StageFailed(f"{spec.python} on {host} has no SGLang this console can read")
    folder = model_path(profile.args, release_of(current))
    card = (
        await read_model_card(ssh, spec.python, folder) if folder else ModelCard(None, None, None)
    )
    target = release_of(version)
    translation = translate(
        profile.args,
        dict(profile.env),
        from_version=release_of(current),
        to_version=target,
        arch=card.architecture,
    )
    install = plan_install(spec.python, target, python)
    canary = (install.python, "-m", MODULE, *translation.new_args)
    if "--port" not in canary:
        canary += ("--port", "PORT" if gpus else str(port))
    shown_env = dict(translation.new_env)
    if gpus:
        shown_env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, gpus))
    env = " ".join(f"{key}={shlex.quote(value)}" for key, value in shown_env.items())
    launch = f"{env} {shlex.join(canary)}".strip()
    return Prepared(
        host=host,
        port=port,
        profile=name,
        current=current,
        card=card,
        translation=translation,
        install=install,
        commands=(*(shlex.join(step) for step in install.steps), launch),
        gpus=tuple(gpus),
    )

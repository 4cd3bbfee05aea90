"""Secrets (API keys, tokens) are masked wherever they are shown or stored.

Masked: the values of flags such as --api-key / --admin-api-key / --hf-token
and of environment variables named like *TOKEN*, *SECRET*, *PASSWORD*, *KEY*.
"""

from __future__ import annotations

import re

MASK = "****"
_SECRET_FLAG = re.compile(
    r"^--(?:[\w-]*-)?(?:api-key|key|secret|password|passwd|token|credentials?)$"
)
_SECRET_ENV = re.compile(
    r"(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)(?:$|_)",
    re.I,
)


def is_secret_flag(flag: str) -> bool:
    return bool(_SECRET_FLAG.match(flag.split("=", 1)[0]))


def is_secret_env(name: str) -> bool:
    return bool(_SECRET_ENV.search(name))


def mask_argv(argv: list[str] | tuple[str, ...]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
        elif arg.startswith("--") and "=" in arg and is_secret_flag(arg):
            out.append(arg.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(arg)
            hide_next = arg.startswith("--") and is_secret_flag(arg)
    return out


def mask_env(env: dict[str, str]) -> dict[str, str]:
    return {name: (MASK if is_secret_env(name) and value else value) for name, value in env.items()}


def mask_value(name: str, value: object, env: bool = False) -> object:
    """Mask a value by the name it is shown under: a flag or dest, or (env=True) an env var."""
    if value in (None, "", False):
        return value
    if env:
        return MASK if is_secret_env(name) else value
    key = name if name.startswith("--") else "--" + name.replace("_", "-")
    return MASK if is_secret_flag(key) else value


def mask_tree(value: object) -> object:
    """A JSON-like document (hosts.yaml as loaded, a result) with its secrets masked: every
    `env`/`*_env` mapping by variable name, every list of strings as an argv."""
    if isinstance(value, dict):
        return {
            key: (
                mask_env(item)
                if isinstance(key, str) and key.endswith("env") and isinstance(item, dict)
                else mask_tree(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        if value and all(isinstance(item, str) for item in value):
            return mask_argv(list(value))
        return [mask_tree(item) for item in value]
    return value


_VALUE = r"(\"[^\"]*\"|'[^']*'|[^\s,;)\]}]+)"
_FLAG_IN_TEXT = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*)(=|[ \t]+)" + _VALUE)
_ASSIGN_IN_TEXT = re.compile(r"(?<![\w.-])([A-Za-z_]\w*)=" + _VALUE)
_KEYED_IN_TEXT = re.compile(r"([\"'])([A-Za-z_][\w-]*)\1([ \t]*:[ \t]*)" + _VALUE)
_NOT_SECRET = ("", "''", '""', "None", "null", "none", "****", "'****'", '"****"')


def _secret_name(name: str) -> bool:
    if name.isupper():
        return is_secret_env(name)
    return is_secret_flag("--" + name.replace("_", "-"))


def _masked(value: str) -> str:
    if value in _NOT_SECRET or value.startswith("--"):
        return value
    if value[0] in "'\"" and value[-1] == value[0] and len(value) >= 2:
        return value[0] + MASK + value[0]
    return MASK


def mask_text(line: str) -> str:
    """A line of free text (a server's log, a shell command) with secret values masked:
    `--api-key sk-..`, `--hf-token=..`, `api_key='..'` (SGLang's server_args),
    `'api_key': '..'` and `"api_key": ".."`, `HF_TOKEN=..`."""
    if "=" not in line and "--" not in line and ":" not in line:
        return line
    line = _FLAG_IN_TEXT.sub(
        lambda hit: (
            hit.group(1) + hit.group(2) + _masked(hit.group(3))
            if is_secret_flag(hit.group(1))
            else hit.group(0)
        ),
        line,
    )
    line = _ASSIGN_IN_TEXT.sub(
        lambda hit: (
            f"{hit.group(1)}={_masked(hit.group(2))}"
            if _secret_name(hit.group(1))
            else hit.group(0)
        ),
        line,
    )
    return _KEYED_IN_TEXT.sub(
        lambda hit: (
            hit.group(1) + hit.group(2) + hit.group(1) + hit.group(3) + _masked(hit.group(4))
            if _secret_name(hit.group(2))
            else hit.group(0)
        ),
        line,
    )

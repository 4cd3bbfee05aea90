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
    return {k: (MASK if is_secret_env(k) and v else v) for k, v in env.items()}


def mask_value(name: str, value: object, env: bool = False) -> object:
    """Mask a value by the name it is shown under: a flag or dest, or (env=True) an env var."""
    if value in (None, "", False):
        return value
    if env:
        return MASK if is_secret_env(name) else value
    key = name if name.startswith("--") else "--" + name.replace("_", "-")
    return MASK if is_secret_flag(key) else value

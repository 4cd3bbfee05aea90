"""What a model's folder on the host says about the engine: its architecture (config.json's
`architectures[0]`, what SGLang's ServerArgs keys its checks on) and the minimum SGLang its card
asks for ("sglang>=0.5.10" in README.md or config.json), read with the host's own python3
(read-only; nothing unread becomes a guess: a field not found is None)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from sglconsole.remote.ssh.connection import SshHost

CARD_SNIPPET = r"""
import json, os, re, sys
folder = os.path.expanduser(sys.argv[1])
out = {"architecture": None, "min_sglang": None, "card": None}
try:
    with open(os.path.join(folder, "config.json")) as handle:
        config = json.load(handle)
    out["architecture"] = (config.get("architectures") or [None])[0]
except Exception:
    config = None
for name in ("README.md", "config.json"):
    try:
        with open(os.path.join(folder, name), errors="replace") as handle:
            text = handle.read(1000000)
    except Exception:
        continue
    found = re.search(r"sglang\s*>=\s*v?([0-9]+(?:\.[0-9]+)+)", text, re.I)
    if found:
        out["min_sglang"], out["card"] = found.group(1), name
        break
print(json.dumps(out))
"""


@dataclass(frozen=True)
class ModelCard:
    architecture: str | None
    min_sglang: str | None
    """The lowest SGLang the card names (None: it names none, or it could not be read)."""
    card: str | None
    """The file that said it (README.md or config.json)."""


async def read_model_card(ssh: SshHost, python: str, folder: str) -> ModelCard:
    """The card of `folder` as the host's `python` reads it (all None when it cannot)."""
    try:
        result = await ssh.run([python, "-c", CARD_SNIPPET, folder], timeout=20)
        data = json.loads(result.stdout) if result.exit_status == 0 else {}
    except (OSError, ValueError):
        data = {}
    return ModelCard(data.get("architecture"), data.get("min_sglang"), data.get("card"))

"""How many token ids the served model has, read from its config.json on the host.

The console's generator sends token ids; an id past the model's embedding table crashed a real
SGLang 0.5.17 scheduler (a CUDA device-side assert) on a 4,096-token model. SGLang's HTTP API
does not say the vocabulary (neither /server_info nor /model_info has it), so it is read where
SGLang reads it: `vocab_size` of the model folder's config.json (or of the Hugging Face cache's
snapshot for a hub id), by a stdlib-only snippet on the host's python3 (3.6+).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# argv[1]: {"model": path or hub id, "cwd": the server's working directory, "env": its HF_* vars}
CONFIG_SNIPPET = r"""
import glob, json, os, sys
req = json.loads(sys.argv[1])
model, env = req.get("model") or "", req.get("env") or {}
folder = os.path.join(req.get("cwd") or "/", os.path.expanduser(model))
if not os.path.isdir(folder) and model.count("/") == 1 and not model.startswith((".", "/", "~")):
    hub = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or os.path.join(
        env.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface"), "hub")
    repo = os.path.join(hub, "models--" + model.replace("/", "--"))
    try:
        with open(os.path.join(repo, "refs", "main")) as fh:
            folder = os.path.join(repo, "snapshots", fh.read().strip())
    except (IOError, OSError):
        found = sorted(glob.glob(os.path.join(repo, "snapshots", "*", "config.json")),
                       key=os.path.getmtime)
        folder = os.path.dirname(found[-1]) if found else repo
path = os.path.join(folder, "config.json")
try:
    with open(path) as fh:
        print(json.dumps({"path": path, "config": json.load(fh)}))
except (IOError, OSError, ValueError) as exc:
    print(json.dumps({"path": path, "error": "%s: %s" % (type(exc).__name__, exc)}))
"""
HF_ENV = ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")
TEXT_CONFIGS = ("text_config", "llm_config", "language_config")
"""Where multimodal configs keep their language model's vocab_size (Gemma 3, InternVL, ...)."""


@dataclass(frozen=True)
class Vocabulary:
    """The model's vocabulary size, or why it is not known (then `size` is None)."""

    size: int | None
    source: str
    """The config.json it was read from, or the reason it could not be."""


def vocab_size(config: object) -> int | None:
    """`vocab_size` of a model's config.json (the language model's, for a multimodal one)."""
    if not isinstance(config, dict):
        return None
    for candidate in (config, *(config.get(name) for name in TEXT_CONFIGS)):
        value = candidate.get("vocab_size") if isinstance(candidate, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def from_answer(stdout: str, exit_status: int | None, stderr: str) -> Vocabulary:
    """The snippet's answer read into a Vocabulary (pure)."""
    try:
        answer = json.loads(stdout.strip().splitlines()[-1]) if exit_status == 0 else None
    except (ValueError, IndexError):
        answer = None
    if not isinstance(answer, dict):
        return Vocabulary(
            None, f"the host could not be asked ({stderr.strip()[-200:] or exit_status})"
        )
    path = answer.get("path") or "config.json"
    if "config" not in answer:
        return Vocabulary(None, f"{path} cannot be read: {answer.get('error')}")
    size = vocab_size(answer["config"])
    return Vocabulary(size, path if size else f"{path} has no vocab_size")


async def read_vocabulary(
    ssh, python: str, model: str | None, cwd: str | None, env: dict
) -> Vocabulary:
    """The served model's vocabulary, asked of the host (never guessed)."""
    if not model:
        return Vocabulary(None, "the server's model path is not known")
    request = {
        "model": model,
        "cwd": cwd,
        "env": {name: value for name, value in env.items() if name in HF_ENV},
    }
    result = await ssh.run([python, "-c", CONFIG_SNIPPET, json.dumps(request)], timeout=15)
    return from_answer(result.stdout, result.exit_status, result.stderr)

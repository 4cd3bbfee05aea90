"""The console's bench prompts stay inside the model's vocabulary (an id past it crashed a real
SGLang 0.5.17 scheduler with a CUDA device-side assert on a 4,096-token model), and the
vocabulary is read from the model's config.json: SGLang's HTTP answers do not carry it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sglconsole.bench import prompts, vocab
from sglconsole.bench.model import SweepSettings
from tests.conftest import REPO

REAL = REPO / "tests" / "fixtures" / "real-sglang-0.5.17-h200" / "idle"  # copied from shared/


def test_a_4096_token_model_gets_only_ids_inside_its_vocabulary():
    ids = prompts.IdRange.for_vocab(4096)
    bodies = prompts.bodies(SweepSettings(input_len=256), 8, 32, ids)
    bodies += prompts.warmup_bodies(SweepSettings(input_len=256), 4, ids)
    sent = [token for body in bodies for token in body["input_ids"]]
    assert max(sent) < 4096 and min(sent) >= 1000
    assert ids.kind == "random token ids in [1000, 4096)"
    assert prompts.IdRange.for_vocab(151936) == prompts.IdRange(1000, 30000)  # as before
    assert prompts.IdRange.for_vocab(256) == prompts.IdRange(64, 256)
    with pytest.raises(ValueError):
        prompts.IdRange.for_vocab(3)


def test_real_sglang_does_not_serve_the_vocabulary():
    """Why the console reads config.json: the real /server_info and /model_info have no
    vocab_size."""
    for name in ("server_info.txt", "model_info.txt"):
        assert vocab.vocab_size(json.loads((REAL / name).read_text())) is None


def test_vocab_size_of_plain_and_multimodal_configs():
    assert vocab.vocab_size({"vocab_size": 4096}) == 4096
    assert vocab.vocab_size({"text_config": {"vocab_size": 262208}}) == 262208
    assert vocab.vocab_size({"architectures": ["X"]}) is None
    assert vocab.vocab_size({"vocab_size": "big"}) is None


def ask(tmp_path, model: str, cwd: str | None = None, env: dict | None = None) -> vocab.Vocabulary:
    """The host snippet run by a local interpreter, as the host's python3 would run it."""
    request = json.dumps({"model": model, "cwd": cwd, "env": env or {}})
    done = subprocess.run(
        [sys.executable, "-I", "-c", vocab.CONFIG_SNIPPET, request],
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path / "home")},
    )
    return vocab.from_answer(done.stdout, done.returncode, done.stderr)


def test_the_host_snippet_finds_a_folder_a_relative_path_and_a_hub_snapshot(tmp_path):
    tiny = tmp_path / "models" / "tiny"
    tiny.mkdir(parents=True)
    (tiny / "config.json").write_text(json.dumps({"vocab_size": 4096}))
    assert ask(tmp_path, str(tiny)).size == 4096
    assert ask(tmp_path, "models/tiny", cwd=str(tmp_path)).size == 4096
    snapshot = tmp_path / "hf" / "hub" / "models--Org--Tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({"vocab_size": 512}))
    assert ask(tmp_path, "Org/Tiny", env={"HF_HOME": str(tmp_path / "hf")}).size == 512
    missing = ask(tmp_path, "Org/Other", env={"HF_HOME": str(tmp_path / "hf")})
    assert missing.size is None and "cannot be read" in missing.source
    (tiny / "config.json").write_text(json.dumps({"architectures": ["X"]}))
    assert ask(tmp_path, str(tiny)).source.endswith("has no vocab_size")

#!/usr/bin/env bash
# Build the real-SGLang venv: sglang 0.5.23 (--no-deps) plus the few packages
# its import chain needs so that, on a CPU-only machine, this works:
#
#   python -c "import argparse, sglang; from sglang.srt.server_args import ServerArgs;
#              p=argparse.ArgumentParser(); ServerArgs.add_cli_args(p); print(sglang.__version__)"
#   python -c "from sglang.srt.debug_utils.log_parser import _PATTERN_DECODE"
#
# Usage: tools/real_sglang_venv.sh [VENV]
#   VENV defaults to $SGLCONSOLE_REAL_SGLANG_VENV, else $REPO/.cache/real-sglang-0.5.23.
# Prints the venv's python path on stdout as its last line.
#
# Idempotent: a stamp file inside the venv holds the sha256 of
# tools/real_sglang_requirements.txt; when it matches (and the smoke check
# passed when it was written) the script exits at once. Any mismatch rebuilds
# the venv from scratch. Everything is installed with --no-deps from the pinned
# list, so no resolver runs and nothing unlisted (CUDA torch!) can come in.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$REPO/tools/real_sglang_requirements.txt"
VENV="${1:-${SGLCONSOLE_REAL_SGLANG_VENV:-$REPO/.cache/real-sglang-0.5.23}}"
STAMP="$VENV/.sglconsole-real-sglang.stamp"

log() { echo "real_sglang_venv: $*" >&2; }

want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  log "up to date: $VENV"
  echo "$VENV/bin/python"
  exit 0
fi

# sglang 0.5.23's wheel is cp311 and so is the local torch file: Python 3.11 only.
pick_python() {
  local c
  for c in "${SGLCONSOLE_PYTHON311:-}" python3.11 python3; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 &&
       "$c" -c 'import sys; raise SystemExit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  log "error: needs Python 3.11 (python3.11 on PATH, or set SGLCONSOLE_PYTHON311)"
  return 2
}
PY="$(pick_python)"

if [ -e "$VENV" ]; then
  # Only ever delete something that is recognisably a venv.
  if [ -f "$VENV/pyvenv.cfg" ]; then
    log "stale or unfinished venv, rebuilding: $VENV"
    rm -rf "$VENV"
  elif [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    log "error: $VENV exists and is not a venv; refusing to touch it"
    exit 2
  fi
fi

start=$SECONDS
log "creating $VENV with $("$PY" --version 2>&1)"
mkdir -p "$(dirname "$VENV")"
"$PY" -m venv "$VENV"

log "installing $(grep -cvE '^\s*(#|$)' "$REQ") pinned packages (--no-deps)"
# pip prints a warning per non-existent extra index dir on some machines; keep
# its output but not the noise.
if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install \
    --no-deps --no-input --progress-bar off -q -r "$REQ" 2>&1 |
    { grep -vE "^WARNING: Location '.*' is ignored" || true; } >&2; then
  log "error: pip install failed; the venv is left without its stamp and will be rebuilt next run"
  exit 1
fi

log "smoke check"
"$VENV/bin/python" - <<'EOF'
import argparse
import sglang
from sglang.srt.server_args import ServerArgs
from sglang.srt.debug_utils.log_parser import _PATTERN_DECODE  # noqa: F401

import torch

p = argparse.ArgumentParser()
ServerArgs.add_cli_args(p)
assert sglang.__version__ == "0.5.23", sglang.__version__
assert torch.__version__.endswith("+cpu"), torch.__version__
print(f"sglang {sglang.__version__}: {len(p._actions)} argparse actions, torch {torch.__version__}")
EOF

echo "$want" > "$STAMP"
log "done in $((SECONDS - start))s, $(du -sh "$VENV" | cut -f1)"
echo "$VENV/bin/python"

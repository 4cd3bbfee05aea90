#!/usr/bin/env bash
# Generate the flag table of an older SGLang release from its real parser:
#
#   tools/gen_flag_table_overlay.sh 0.5.17   # -> sglconsole/data/flags/sglang-0.5.17.json
#
# Builds (once; a stamp holds the sha256 of its inputs) an overlay venv,
# $REPO/.cache/real-sglang-VERSION-overlay (or $2), whose .pth appends the
# 0.5.23 real-SGLang venv's site-packages (tools/real_sglang_venv.sh builds it)
# and which holds, first on sys.path, sglang==VERSION and the few packages its
# import chain needs beyond that venv, all --no-deps from
# tools/real_sglang_overlay/requirements-VERSION.txt, plus the torchvision
# stand-in tools/real_sglang_overlay/_sglang_import_stubs.py (no CPU
# torchvision on PyPI). Then runs tools/gen_flag_table.py there, recording
# that environment in the table's "environment" key.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${1:?usage: tools/gen_flag_table_overlay.sh VERSION [VENV]}"
REQ="$REPO/tools/real_sglang_overlay/requirements-$VERSION.txt"
STUBS="$REPO/tools/real_sglang_overlay/_sglang_import_stubs.py"
VENV="${2:-$REPO/.cache/real-sglang-$VERSION-overlay}"
STAMP="$VENV/.sglconsole-overlay.stamp"
OUT="$REPO/sglconsole/data/flags/sglang-$VERSION.json"

log() { echo "gen_flag_table_overlay: $*" >&2; }
[ -f "$REQ" ] || { log "error: no $REQ"; exit 2; }

BASE_PY="$("$REPO/tools/real_sglang_venv.sh")"
BASE_SITE="$("$BASE_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

want="$(cat "$REQ" "$STUBS" | sha256sum | cut -d' ' -f1) $BASE_SITE"
if ! { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; }; then
  if [ -e "$VENV" ]; then
    [ -f "$VENV/pyvenv.cfg" ] || { log "error: $VENV exists and is not a venv"; exit 2; }
    rm -rf "$VENV"
  fi
  log "creating overlay venv $VENV on $BASE_SITE"
  python3.11 -m venv "$VENV"
  SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  # .pth directories are appended after the venv's own site-packages: ours win.
  echo "$BASE_SITE" > "$SITE/zz-real-sglang-base.pth"
  cp "$STUBS" "$SITE/_sglang_import_stubs.py"
  echo "import _sglang_import_stubs" > "$SITE/00-sglang-import-stubs.pth"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/python" -m pip install \
      --no-deps --no-input --progress-bar off -q -r "$REQ" 2>&1 |
      { grep -vE "^WARNING: Location '.*' is ignored" || true; } >&2
  echo "$want" > "$STAMP"
fi

got="$("$VENV/bin/python" -c 'import sglang; print(sglang.__version__)' 2>/dev/null)"
[ "$got" = "$VERSION" ] || { log "error: overlay imports sglang $got, not $VERSION"; exit 1; }
NOTE="CPU-only overlay venv (tools/gen_flag_table_overlay.sh): sglang==$VERSION and \
tools/real_sglang_overlay/requirements-$VERSION.txt installed --no-deps first on sys.path, \
the rest (torch 2.13.0+cpu, ...) from the 0.5.23 real-SGLang venv (tools/real_sglang_venv.sh); \
torchvision is a stand-in that does nothing (tools/real_sglang_overlay/_sglang_import_stubs.py): \
no CPU torchvision build exists for that torch, and add_cli_args never calls it"
"$VENV/bin/python" "$REPO/tools/gen_flag_table.py" --environment "$NOTE" "$OUT"

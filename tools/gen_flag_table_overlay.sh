#!/usr/bin/env bash
# Generate the flag table of one SGLang release from its real parser:
#
#   tools/gen_flag_table_overlay.sh 0.5.17   # -> sglconsole/data/flags/sglang-0.5.17.json
#   tools/gen_flag_table_overlay.sh 0.5.17 OUT.json
#
# The release's PyPI wheel (tools/sglang_wheels.py: .cache/sglang-wheels/ or
# $SGLCONSOLE_SGLANG_WHEELS, fetched with `pip download --no-deps` when missing) is
# unpacked, never installed, into .cache/sglang-src/VERSION and put first on sys.path of
# the CPU-only 0.5.23 real-SGLang venv (tools/real_sglang_venv.sh builds it once), so that
# venv's torch, numpy, ... serve every release. Third-party modules a release's import
# chain needs and the venv lacks (or has in another version) get do-nothing stand-ins,
# found by trying (tools/real_sglang_overlay/flag_table.py) and named in the table's
# "environment" and "stubbed_modules". No hand-found dependency lists.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${1:?usage: tools/gen_flag_table_overlay.sh VERSION [OUT]}"
OUT="${2:-$REPO/sglconsole/data/flags/sglang-$VERSION.json}"

BASE_PY="$("$REPO/tools/real_sglang_venv.sh" | tail -1)"
SRC="$(python3 "$REPO/tools/sglang_wheels.py" unpack "$VERSION")"
ORIGIN="$(python3 "$REPO/tools/sglang_wheels.py" origin "$VERSION")"
env -u PYTHONPATH "$BASE_PY" "$REPO/tools/real_sglang_overlay/flag_table.py" \
  "$SRC" "$OUT" --origin "$ORIGIN"

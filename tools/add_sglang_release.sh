#!/usr/bin/env bash
# Add (or regenerate) the tables of one SGLang release, from that release's own wheel:
#
#   tools/add_sglang_release.sh 0.5.24
#
# 1. the wheel: .cache/sglang-wheels/sglang-X-*.whl (or $SGLCONSOLE_SGLANG_WHEELS), else
#    `pip download --no-deps sglang==X` there; unpacked (never installed) into
#    .cache/sglang-src/X (tools/sglang_wheels.py);
# 2. the simulator's version table, read from the source with ast:
#    sglconsole/sim/versions/sglang-X.json (tools/gen_sim_version_table.py);
# 3. the flag table, from the release's real parser on the CPU-only 0.5.23 venv with
#    stand-ins for what it lacks: sglconsole/data/flags/sglang-X.json
#    (tools/gen_flag_table_overlay.sh; builds tools/real_sglang_venv.sh's venv once);
# 4. the env registry table, when tools/gen_env_table.py exists:
#    tools/gen_env_table.py WHEEL sglconsole/data/envs/sglang-X.json;
# 5. the ServerArgs checks: sglconsole/data/checks/sglang-X.json (tools/gen_server_args_checks.py);
# 6. the checks of X: tests/test_release_tables.py (both tables regenerated and compared),
#    tests/test_argdiff_tables.py (argdiff --sglang-version X judges with X's own table).
#
# Then review `git diff`/`git status` and commit the new tables. A version newer than the
# newest table is judged with the newest one until its own is added (argdiff says so).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${1:?usage: tools/add_sglang_release.sh VERSION   (e.g. 0.5.24)}"
[[ "$VERSION" =~ ^[0-9]+(\.[0-9]+)+$ ]] || { echo "add_sglang_release: not a release: $VERSION" >&2; exit 2; }
cd "$REPO"
log() { echo "==> $*" >&2; }

log "wheel of SGLang $VERSION"
WHEEL="$(python3 tools/sglang_wheels.py fetch "$VERSION")"
SRC="$(python3 tools/sglang_wheels.py unpack "$VERSION")"
ORIGIN="$(python3 tools/sglang_wheels.py origin "$VERSION")"
echo "$ORIGIN" >&2

log "version table (routes, keys, log shapes, startup lines, metric families)"
python3 tools/gen_sim_version_table.py "$SRC" "sglconsole/sim/versions/sglang-$VERSION.json" \
  --origin "$ORIGIN"

log "flag table (the release's own parser)"
tools/gen_flag_table_overlay.sh "$VERSION"

if [ -f tools/gen_env_table.py ]; then
  log "env registry table"
  python3 tools/gen_env_table.py "$WHEEL" "sglconsole/data/envs/sglang-$VERSION.json"
fi

log "ServerArgs checks (what the release refuses and names the remedy of)"
python3 tools/gen_server_args_checks.py "$SRC" "sglconsole/data/checks/sglang-$VERSION.json" \
  --origin "$ORIGIN"

log "checks"
PY="$REPO/.venv/bin/python"
[ -x "$PY" ] || { ./dev setup >/dev/null 2>&1 || true; }
[ -x "$PY" ] || PY=python3
T=tests/test_release_tables.py A=tests/test_argdiff_tables.py
SGLCONSOLE_CHECK_FLAG_TABLES="$VERSION" "$PY" -m pytest -q -p no:cacheprovider \
  "$T::test_every_release_from_the_oldest_to_the_newest_has_both_tables" \
  "$T::test_each_table_is_its_release_and_names_the_wheel_it_came_from[$VERSION]" \
  "$T::test_the_version_table_is_what_its_wheel_says[$VERSION]" \
  "$T::test_the_server_args_checks_are_what_its_wheel_says[$VERSION]" \
  "$T::test_the_flag_table_is_what_its_release_parser_says[$VERSION]" \
  "$A::test_each_version_is_judged_by_its_own_table[$VERSION]" \
  "$A::test_the_console_reads_a_table_as_the_simulator_does[$VERSION]"
log "done: git add sglconsole/data/{flags,checks}/sglang-$VERSION.json sglconsole/sim/versions/sglang-$VERSION.json"

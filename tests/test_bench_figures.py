"""README's performance tables and bench/results.json say the same, and every figure says where
it comes from (bench/readme_figures.py, bench/results_file.py). Files only: no process runs; the
real README and results.json are read, never written."""

from __future__ import annotations

import json
import shutil
import subprocess

from bench import readme_figures, results_file

README = readme_figures.README
RESULTS = readme_figures.RESULTS
STAMP = {
    "commit": "0123456789abcdef0123456789abcdef01234567",
    "dirty": False,
    "at": "2027-01-02T03:04:05+00:00",
    "machine": {"cores": 2, "loadavg": [0.5, 0.4, 0.3]},
    "command": ["bench/run.py", "--only-restore"],
}


def real_results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_the_readme_tables_are_what_results_json_renders():
    differing = readme_figures.differences(README.read_text(encoding="utf-8"), real_results())
    assert not differing, "run .venv/bin/python bench/readme_figures.py:\n" + "\n".join(differing)


def test_every_figure_in_results_json_says_where_it_comes_from():
    results = real_results()
    provenance = results.pop(results_file.PROVENANCE)
    assert set(provenance) == set(results)
    for key, stamp in provenance.items():
        assert stamp.get("commit") or stamp.get("recorded_in"), key


def test_a_changed_number_fails_the_check(tmp_path, capsys):
    readme, results = tmp_path / "README.md", tmp_path / "results.json"
    shutil.copy(README, readme)
    shutil.copy(RESULTS, results)
    argv = ["--check", "--readme", str(readme), "--results", str(results)]
    assert readme_figures.main(argv) == 0
    changed = json.loads(results.read_text())
    changed["cpu_console_vs_naive"] = 0.5
    results.write_text(json.dumps(changed))
    assert readme_figures.main(argv) == 1
    said = capsys.readouterr().out
    assert "cpu_console_vs_naive" in said and "| 0.500 (" in said
    # regenerated, the copy agrees again; only that row changed
    assert readme_figures.main(["--readme", str(readme), "--results", str(results)]) == 0
    assert readme_figures.main(argv) == 0
    before, after = README.read_text().splitlines(), readme.read_text().splitlines()
    assert [line for line in after if line not in before] == [
        line for line in after if "`cpu_console_vs_naive`" in line
    ]


def test_a_missing_or_null_figure_reads_not_measured():
    results = real_results()
    del results["restore_overhead_s"]
    results["rss_growth"] = None
    del results["parser"]["lines"]  # a setting in the row's text
    rows = {row.keys[0]: row for row in readme_figures.SSH_FLEET}
    for key in ("restore_overhead_s", "rss_growth"):
        line = readme_figures.render_row(rows[key], results)
        # no remembered number, and nothing in the "measured" column
        assert line.endswith(f" | {readme_figures.NOT_MEASURED} | {rows[key].target} |  |"), line
    line = readme_figures.render_row(rows["parser_vs_sglang_regex"], results)
    ratio = f"{results['parser_vs_sglang_regex']:.2f}×"  # the rest of the row still reads
    assert "on ? lines" in line and ratio in line, line


def test_the_measured_column_comes_from_provenance():
    results = {
        "router_view_nobody_s": 1.5,
        "router_view_back_s": 0.5,
        "router_view_poll_ms": 20.0,
        "router_view_detail": {"rounds": 3, "poll_interval_s": 2.0},
        "provenance": {
            "router_view_nobody_s": STAMP,
            "router_view_back_s": {"recorded_in": "fedcba9876543210", "committed_at": "2026-12-04"},
        },
    }
    row = next(row for row in readme_figures.SSH_FLEET if "router_view_back_s" in row.keys)
    cells = readme_figures.render_row(row, results).split(" | ")
    assert cells[1].startswith("1.50 s / 0.50 s (the router is asked every 2 s;")
    assert cells[-1] == "0123456 2027-01-02; recorded in fedcba9 2026-12-04 |"
    dirty = {**STAMP, "dirty": True}
    assert readme_figures.measured(dirty) == "0123456 (uncommitted changes) 2027-01-02"
    assert readme_figures.measured(None) == "unknown"


def test_a_save_stamps_the_keys_it_changed_and_keeps_the_others(tmp_path):
    path = tmp_path / "results.json"
    old = {"commit": "1" * 40, "dirty": False, "at": "2026-01-01T00:00:00+00:00"}
    older = {"recorded_in": "2" * 40, "committed_at": "2025-01-01T00:00:00+00:00"}
    path.write_text(
        json.dumps({"a": 1, "b": [1, 2], "c": 3, "provenance": {"a": old, "b": older, "c": old}})
    )
    whole = results_file.merge(path, {"a": 2, "c": 3}, stamp=STAMP)  # c: measured, same value
    assert whole["provenance"] == {"a": STAMP, "b": older, "c": STAMP}
    assert json.loads(path.read_text()) == whole
    # a bench that reads, changes and saves the whole: only the key whose value changed
    results = results_file.load(path)
    results["b"] = (1, 3)
    results["new"] = {"x": 1}
    results_file.save(path, results, stamp={**STAMP, "at": "later"})
    provenance = json.loads(path.read_text())["provenance"]
    assert provenance["b"]["at"] == provenance["new"]["at"] == "later"
    assert provenance["a"] == provenance["c"] == STAMP
    assert list(json.loads(path.read_text()))[-1] == "provenance"  # kept beside, after


def test_a_figure_without_a_record_gets_the_commit_that_wrote_its_value():
    # newest first, with parents: a merge of a side branch that never held the key
    commits = [
        ("merge", "2026-12-04T10:00:00+00:00", {"view": 2.0, "cost": 1.0}, ["main2", "side"]),
        ("side", "2026-12-04T09:00:00+00:00", {"cost": 1.0}, ["base"]),
        ("main2", "2026-12-04T08:00:00+00:00", {"view": 2.0, "cost": 0.5}, ["main1"]),
        ("main1", "2026-12-04T07:00:00+00:00", {"view": 1.0, "cost": 0.5}, ["base"]),
        ("base", "2026-12-03T07:00:00+00:00", {"cost": 0.5}, []),
    ]
    found = results_file.recorded_in({"view": 2.0, "cost": 1.0, "fresh": 3}, commits)
    assert found == {
        "view": {"recorded_in": "main2", "committed_at": "2026-12-04T08:00:00+00:00"},
        "cost": {"recorded_in": "side", "committed_at": "2026-12-04T09:00:00+00:00"},
    }  # "fresh": written since the last commit, so nothing is known of it
    assert results_file.recorded_in({"view": 2.0}, []) == {}


def test_a_run_after_another_is_not_called_uncommitted_for_the_results_file_alone(tmp_path):
    """The results file a first bench wrote is not a change of the code the second measures."""
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    results = tmp_path / "bench" / "results.json"
    results.parent.mkdir()
    results.write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    assert results_file._dirty(results, tmp_path) is False
    results.write_text('{"a": 1}\n')  # " M bench/results.json", the first line of the status
    assert results_file._dirty(results, tmp_path) is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert results_file._dirty(results, tmp_path) is True

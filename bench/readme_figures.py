"""README.md's performance tables, generated from bench/results.json.

    .venv/bin/python bench/readme_figures.py           # rewrites the tables in README.md
    .venv/bin/python bench/readme_figures.py --check   # exit 1, naming the rows, if they differ

Each table sits between `<!-- figures:begin NAME -->` and `<!-- figures:end NAME -->`; each row
is a `Row` of TABLES: its text and value are templates whose {fields} are paths into
results.json (`phases.monitor.cpu_s`; `a/b` divides; `!M` turns KiB into MiB). A row whose value
needs a figure the file lacks (or holds as null) reads "not measured", never a remembered
number; the "measured" column says the commit and date of its figures, from their provenance
(bench/results_file.py).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import string
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RESULTS = REPO / "bench" / "results.json"
NOT_MEASURED = "not measured"
HEADER = ("| measure | sglconsole | target | measured |", "|---|---|---|---|")


@dataclass(frozen=True)
class Row:
    keys: tuple[str, ...]
    """The figures the row is about (results.json's top-level keys, named in its text): their
    provenance is its "measured" column; the other figures the value quotes are their detail."""
    text: str
    """What is measured; {fields} are the run's setting (a missing one reads "?")."""
    value: str
    """The figure and its context, every number a {field}."""
    target: str = ""


SSH_FLEET = (
    Row(
        ("cpu_console_vs_naive",),
        "console CPU, monitor headless / naive (`cpu_console_vs_naive`)",
        "{cpu_console_vs_naive:.3f} ({phases.monitor.cpu_s_per_host_minute:.2f} vs "
        "{phases.naive.cpu_s_per_host_minute:.2f} CPU-s per host-minute)",
        "≤ 0.25",
    ),
    Row(
        ("cpu_tui_vs_naive",),
        "console CPU, TUI headless / naive (`cpu_tui_vs_naive`)",
        "{cpu_tui_vs_naive:.3f} ({phases.tui.cpu_s/phases.monitor.cpu_s:.1f}× the monitor)",
        "≤ 2× the monitor",
    ),
    Row(
        ("cpu_host_vs_naive",),
        "host-side CPU (sshd + everything it runs) / naive (`cpu_host_vs_naive`)",
        "{cpu_host_vs_naive:.3f} ({phases.monitor.host_cpu_s_per_host_minute:.2f} vs "
        "{phases.naive.host_cpu_s_per_host_minute:.2f} CPU-s per host-minute)",
        "≤ 0.2",
    ),
    Row(
        ("freshness_p95_ms",),
        "freshness, line appended on a host → in fleet state, p95, {hosts} hosts "
        "(`freshness_p95_ms`)",
        "{freshness_p95_ms:.0f} ms (p50 {freshness.16_hosts.p50_ms:.0f} ms, max "
        "{freshness.16_hosts.max_ms:.0f} ms, {freshness.16_hosts.lost} of "
        "{freshness.16_hosts.n} lost)",
        "≤ 250 ms",
    ),
    Row(
        ("freshness_tui_p95_ms",),
        "freshness → on the TUI's screen, p95, {hosts} hosts (`freshness_tui_p95_ms`)",
        "{freshness_tui_p95_ms:.0f} ms (p50 {freshness.tui_on_screen.16_hosts.p50_ms:.0f} ms)",
    ),
    Row(
        ("cold_start_s",),
        "cold start: `status` on {hosts} hosts + 1 that hangs, until the table is printed, "
        "median of 3 (`cold_start_s`, `bench/run.py --only-cold-start`)",
        "{cold_start_s:.2f} s (connect timeout {connect_timeout_s:g} s; process exit "
        "{cold_start_exit_s:.2f} s; one host after another {cold_start_serial_s:.2f} s)",
        "≤ connect timeout + 0.5 s",
    ),
    Row(
        ("parser_vs_sglang_regex",),
        "`parse_line` vs SGLang's `_PATTERN_DECODE` on {parser.lines:,} lines "
        "(`parser_vs_sglang_regex`)",
        "{parser_vs_sglang_regex:.2f}× on {parser.format}'s lines (the regex matches "
        "{parser.sglang_regex_matches:,} of their {parser.decode_lines:,} decode lines: it wants "
        "a comma {parser.format} no longer writes); {parser_vs_sglang_regex_legacy:.2f}× on "
        "older lines ({parser_legacy.sglang_regex_matches:,} of their "
        "{parser_legacy.decode_lines:,} decode lines matched)",
        "≥ 1.0",
    ),
    Row(
        ("router_restore_requests",),
        "rolling restore of {router_restore_detail.servers} routed servers under steady load "
        "({router_restore_detail.clients} clients through the real "
        "{router_restore_detail.router}): requests (`router_restore_requests`)",
        "{router_restore_requests} in {router_restore_detail.seconds:g} s of restores "
        "(`python bench/router_restore.py`)",
    ),
    Row(
        ("router_restore_failed",),
        "… of them failed (`router_restore_failed`)",
        "{router_restore_failed}",
        "0",
    ),
    Row(
        ("router_restore_p99_ms",),
        "… client latency p99 (`router_restore_p99_ms`)",
        "{router_restore_p99_ms:.1f} ms (p50 {router_restore_detail.p50_ms:.1f} ms)",
    ),
    Row(
        ("router_restore_smg_requests",),
        "… the same through the real SMG gateway (smg, an admin token, "
        "each put-back verified): requests (`router_restore_smg_requests`)",
        "{router_restore_smg_requests} in {router_restore_smg_detail.seconds:g} s of restores "
        "(`python bench/router_restore.py --router smg`)",
    ),
    Row(
        ("router_restore_smg_failed",),
        "… of them failed (`router_restore_smg_failed`)",
        "{router_restore_smg_failed}",
        "0",
    ),
    Row(
        ("router_restore_smg_p99_ms",),
        "… client latency p99 (`router_restore_smg_p99_ms`)",
        "{router_restore_smg_p99_ms:.1f} ms (p50 {router_restore_smg_detail.p50_ms:.1f} ms)",
    ),
    Row(
        ("canary_cost",),
        "the canary (#27) on {canary_cost.hosts} hosts × {canary_cost.servers_per_host} servers "
        "under load: requests per server-hour at its default {canary_cost.default_interval_s:g} s, "
        "and the console's CPU for them (`canary_cost`, `python bench/canary_cost.py`)",
        "{canary_cost.requests_per_server_hour:g} requests, "
        "{canary_cost.cpu_s_per_server_hour:.3f} CPU-s per server-hour "
        "(the exporter: {canary_cost.on.cpu_s:.1f} CPU-s with "
        "{canary_cost.on.runs} runs every {canary_cost.interval_measured_s:g} s, "
        "{canary_cost.off.cpu_s:.1f} without, {canary_cost.seconds:g} s each; medians of "
        "{canary_cost.rounds} rounds, off and on in turn)",
    ),
    Row(
        ("precursors_cpu_per_host_minute",),
        "the signs before an outage (#27: host memory, kernel log, ECC) on "
        "{precursors_cost.hosts} hosts × {precursors_cost.servers_per_host} servers under load: "
        "the monitor's CPU on / off (`precursors_cpu_per_host_minute`, "
        "`python bench/precursors_cost.py`)",
        "+{precursors_cpu_per_host_minute:.3f} CPU-s per host-minute "
        "({precursors_cost.on.cpu_s_per_host_minute:.3f} vs "
        "{precursors_cost.off.cpu_s_per_host_minute:.3f}); the hosts "
        "{precursors_cost.on.host_cpu_s_per_host_minute:.3f} vs "
        "{precursors_cost.off.host_cpu_s_per_host_minute:.3f}",
    ),
    Row(
        ("containers_events_saving_cpu_per_host_minute",),
        "watching containers (#29) on {containers_cost.hosts} host(s) whose server runs in "
        "Docker: the hosts' side (sshd, the agent and its CLI calls) + dockerd/containerd, the "
        "agent following `docker events` vs polling `ps` every "
        "{containers_cost.poll_interval_s:g} s (`containers_events_saving_cpu_per_host_minute`, "
        "`python bench/containers_cost.py`)",
        "{containers_cost.events.host_cpu_s_per_host_minute:.3f} + "
        "{containers_cost.events.daemon_cpu_s_per_host_minute:.3f} vs "
        "{containers_cost.poll.host_cpu_s_per_host_minute:.3f} + "
        "{containers_cost.poll.daemon_cpu_s_per_host_minute:.3f} CPU-s per host-minute "
        "(saves {containers_events_saving_cpu_per_host_minute:.3f}); the console "
        "{containers_cost.events.cpu_s_per_host_minute:.3f} vs "
        "{containers_cost.poll.cpu_s_per_host_minute:.3f}",
    ),
    Row(
        ("router_view_nobody_s", "router_view_back_s"),
        'router view: a worker taken out through the real router\'s API → "serving nobody" in '
        'the fleet state; put back → "in router", medians of {router_view_detail.rounds} '
        "(`router_view_nobody_s`, `router_view_back_s`, `python bench/router_view.py`)",
        "{router_view_nobody_s:.2f} s / {router_view_back_s:.2f} s (the router is asked every "
        "{router_view_detail.poll_interval_s:g} s; one ask through the SSH port forward, views "
        "published again: {router_view_poll_ms:.0f} ms, `router_view_poll_ms`)",
        "≤ the 2 s poll",
    ),
    Row(
        ("restore_overhead_s",),
        "restore overhead beyond the server's own startup (`restore_overhead_s`, "
        "`bench/run.py --only-restore`)",
        "{restore_overhead_s:.2f} s in the console, {restore_overhead_cli_s:.2f} s via the CLI",
        "≤ 0.5 s",
    ),
    Row(
        ("restore_overhead_real_parser_cold_s", "restore_overhead_real_parser_warm_s"),
        "… on a host whose SGLang parser costs what a real one does "
        "({restore.real_parser.parser_s:g} s on the H200), first restore / next "
        "(`restore_overhead_real_parser_cold_s`, `_warm_s`)",
        "{restore_overhead_real_parser_cold_s:.1f} s / {restore_overhead_real_parser_warm_s:.2f} "
        "s: the parser is asked once per SGLang version, then its answer is cached",
        "≤ 1 s after the first",
    ),
    Row(
        ("idle_tui_cpu_pct",),
        "the console left alone, the demo with idle servers: TUI (+ `--record`) / bare monitor "
        "CPU (`idle_tui_cpu_pct`, `python bench/idle_cost.py`)",
        "{idle_tui_cpu_pct:.1f}% / {idle_cost.monitor.cpu_pct:.1f}% of one core (with the demo's "
        "load: {loaded_cost.tui.cpu_pct:.1f}% / {loaded_cost.monitor.cpu_pct:.1f}%)",
        "idle ≤ 1% of a core",
    ),
    Row(
        ("idle_tui_pane_cpu_pct",),
        "… the same, `sglconsole -c hosts.yaml` in a real tmux pane "
        "({idle_cost.tui_pane.size}), its own process (`idle_tui_pane_cpu_pct`)",
        "{idle_tui_pane_cpu_pct:.1f}% of one core (the tmux server beside it: "
        "{idle_cost.tui_pane.tmux_server_cpu_pct:.1f}%)",
        "≤ 1% of a core",
    ),
    Row(
        ("idle_tui_pane_3_hosts_cpu_pct",),
        "… the same on the demo's first 3 hosts (ct129, h200x4, old059: the demo when the ≤ 1% "
        "target was set on a 3.8% pane, before ct130 joined; `idle_tui_pane_3_hosts_cpu_pct`)",
        "{idle_tui_pane_3_hosts_cpu_pct:.1f}% of one core",
        "≤ 1% of a core",
    ),
    Row(
        ("idle_record_mb_per_hour",),
        "`--record` while idle / under the demo's load (`idle_record_mb_per_hour`)",
        "{idle_record_mb_per_hour:.1f} / {loaded_cost.tui.record_mb_per_hour:.1f} MB per hour",
    ),
    Row(
        ("rss_growth",),
        "console RSS from minute 1 to minute {rss_minutes:g} (`rss_growth`)",
        "{rss_growth:+.1%} ({rss_minute_1_kib!M:.0f} → {rss_end_kib!M:.0f} MiB)",
        "≤ 10%",
    ),
)

PROMETHEUS = (
    Row(
        ("prom_console_cpu_cores_1000",),
        "console CPU in Prometheus mode, {prom_scale.servers:,} servers / {prom_scale.hosts} "
        "hosts, scrape {prom_scale.scrape_interval_s:g} s, console read every "
        "{prom_scale.console_interval_s:g} s (`prom_console_cpu_cores_1000`)",
        "{prom_console_cpu_cores_1000:.3f} cores (Prometheus itself "
        "{prom_scale.prometheus_cores:.2f}; the SSH console on {prom_scale.hosts} hosts would "
        "need ~{prom_scale.ssh_console_cores_same_hosts_extrapolated:.2f}, from its "
        "{phases.monitor.cpu_s_per_host_minute:.3f} CPU-s per host-minute)",
        "< 0.2",
    ),
    Row(
        ("prom_freshness_p95_s",),
        "… a server's change → in its view, p95 (`prom_freshness_p95_s`)",
        "{prom_freshness_p95_s:.2f} s = {prom_scale.freshness_p95_in_scrapes:.2f} scrape "
        "intervals (p50 {prom_scale.freshness.p50_s:.2f} s, max {prom_scale.freshness.max_s:.2f} "
        "s, {prom_scale.freshness.lost} of {prom_scale.freshness.n} lost)",
        "≤ 2 scrape intervals",
    ),
    Row(
        ("prom_scale_scrape_5s",),
        "… scraped every {prom_scale_scrape_5s.scrape_interval_s:g} s, console read every "
        "{prom_scale_scrape_5s.console_interval_s:g} s (`prom_scale_scrape_5s`)",
        "{prom_scale_scrape_5s.console_cores:.3f} cores; p95 "
        "{prom_scale_scrape_5s.freshness.p95_s:.2f} s = "
        "{prom_scale_scrape_5s.freshness_p95_in_scrapes:.2f} scrape intervals "
        "({prom_scale_scrape_5s.freshness.lost} of {prom_scale_scrape_5s.freshness.n} lost)",
    ),
    Row(
        ("exporter_cpu_per_host_minute",),
        "`sglconsole exporter` on {exporter_cost.hosts} simulated SSH hosts × "
        "{exporter_cost.servers_per_host} servers, CPU-s per host-minute "
        "(`exporter_cpu_per_host_minute`)",
        "{exporter_cpu_per_host_minute:.3f} (the console's monitor in the same run "
        "{exporter_cost.monitor.cpu_s_per_host_minute:.3f}; load average "
        "{exporter_cost.machine_before.loadavg_1_5_15.0:.0f} on "
        "{exporter_cost.machine_before.cpus} cores as it began); with "
        "{exporter_cost_4_servers.servers_per_host} servers a host "
        "{exporter_cost_4_servers.exporter.cpu_s_per_host_minute:.3f} (monitor "
        "{exporter_cost_4_servers.monitor.cpu_s_per_host_minute:.3f}; load average "
        "{exporter_cost_4_servers.machine_before.loadavg_1_5_15.0:.0f})",
        "< 0.25 (the console today)",
    ),
)

TABLES = {"ssh": SSH_FLEET, "prometheus": PROMETHEUS}


class _Missing(Exception):
    pass


class _Figures(string.Formatter):
    """str.format over results.json: a field is a dotted path (list items by index), `a/b` a
    quotient, `!M` KiB in MiB. A missing or null figure raises _Missing, or reads "?" if
    LENIENT (a row's text: its setting)."""

    def __init__(self, results: dict, lenient: bool = False):
        super().__init__()
        self.results, self.lenient = results, lenient

    def get_field(self, field_name, args, kwargs):
        try:
            parts = [self.figure(path) for path in field_name.split("/")]
        except _Missing:
            if not self.lenient:
                raise
            return None, field_name
        value = parts[0]
        for divisor in parts[1:]:
            value = value / divisor
        return value, field_name

    def figure(self, path: str):
        value = self.results
        for step in path.split("."):
            if isinstance(value, list) and step.isdigit() and int(step) < len(value):
                value = value[int(step)]
            elif isinstance(value, dict) and step in value:
                value = value[step]
            else:
                raise _Missing(path)
        if value is None:
            raise _Missing(path)
        return value

    def convert_field(self, value, conversion):
        if value is None:
            return None
        if conversion == "M":
            return value / 1024
        return super().convert_field(value, conversion)

    def format_field(self, value, format_spec):
        return "?" if value is None else super().format_field(value, format_spec)


def render_row(row: Row, results: dict) -> str:
    """One Markdown row: text, value (or "not measured"), target, measured."""
    text = _Figures(results, lenient=True)
    described = text.format(row.text)
    figures = _Figures(results)
    try:
        value = figures.format(row.value)
    except _Missing:
        value = NOT_MEASURED
    when = ""
    if value != NOT_MEASURED:
        provenance = results.get("provenance") or {}
        stamps = [measured(provenance.get(key)) for key in row.keys]
        when = "; ".join(dict.fromkeys(stamps))
    return f"| {described} | {value} | {row.target} | {when} |"


def measured(stamp: dict | None) -> str:
    """The "measured" cell for one key's provenance record (bench/results_file.py)."""
    if not stamp:
        return "unknown"
    if "commit" in stamp:
        dirty = " (uncommitted changes)" if stamp.get("dirty") else ""
        commit = (stamp.get("commit") or "?")[:7]
        return f"{commit}{dirty} {str(stamp.get('at', '?'))[:10]}"
    if "recorded_in" in stamp:
        return f"recorded in {stamp['recorded_in'][:7]} {str(stamp.get('committed_at'))[:10]}"
    return "unknown"


def render_table(rows: tuple[Row, ...], results: dict) -> list[str]:
    return [*HEADER, *(render_row(row, results) for row in rows)]


def _block(name: str) -> re.Pattern:
    name = re.escape(name)
    return re.compile(
        rf"(<!-- figures:begin {name} -->\n)(.*?)(<!-- figures:end {name} -->)", re.DOTALL
    )


def generate(readme: str, results: dict) -> str:
    """README's text with every table between its markers rendered from RESULTS."""
    for name, rows in TABLES.items():
        found = _block(name).search(readme)
        if found is None:
            raise SystemExit(f"README has no <!-- figures:begin {name} --> ... end markers")
        table = "\n".join(render_table(rows, results)) + "\n"
        readme = readme[: found.start(2)] + table + readme[found.end(2) :]
    return readme


def differences(readme: str, results: dict) -> list[str]:
    """The rows of README's tables that are not what RESULTS renders ([] when they agree)."""
    wanted = generate(readme, results)
    if wanted == readme:
        return []
    return [
        line
        for line in difflib.unified_diff(readme.splitlines(), wanted.splitlines(), lineterm="", n=0)
        if line.startswith(("-|", "+|", "-<", "+<"))
    ] or ["README differs from what bench/results.json renders (outside the rows)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README's tables differ")
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    readme = args.readme.read_text(encoding="utf-8")
    results = json.loads(args.results.read_text(encoding="utf-8"))
    if args.check:
        differing = differences(readme, results)
        for line in differing:
            print(("README has  " if line[0] == "-" else "results.json gives  ") + line[1:])
        if differing:
            print("run: .venv/bin/python bench/readme_figures.py", file=sys.stderr)
        return 1 if differing else 0
    generated = generate(readme, results)
    if generated != readme:
        args.readme.write_text(generated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A synthetic Prometheus scrape target: the /metrics pages of many SGLang servers in ONE process.

Every server's page has the shape of a real SGLang 0.5.12 page (tests/fixtures/real-sglang-0.5.12-
h200/under-load/metrics.txt: its metric names, HELP/TYPE lines, label sets and histograms), plus an
`instance="hostNNN.example:PORT"` label that Prometheus keeps with `honor_labels: true`. Server N
is at /metrics/N: Prometheus scrapes each as a target of its own (as it scrapes a real fleet,
each target at its own moment of the interval). Pages are built once; per scrape only the two
moving series are written again (the counter SGLang's tok/s comes from, and the running
requests), so serving 1,000 servers costs this process little.

Changes: every --flip-every seconds (jittered) one random server's `sglang:num_running_reqs`
takes a value never used before; GET /flips answers [[epoch seconds, "host:port", value], ...].

    python -m bench.sglang_target --hosts 250 --servers 4 --port 9700
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests/fixtures/real-sglang-0.5.12-h200/under-load/metrics.txt"
)
RUNNING = "sglang:num_running_reqs"
TOKENS = "sglang:generation_tokens_total"
TOK_S = 180.0
"""Each server decodes about this many tokens per second (its counter grows by it)."""


def host_name(index: int) -> str:
    return f"host{index:03d}.example"


def fleet(hosts: int, servers: int) -> list[tuple[str, int]]:
    """(host, port) of every simulated server: ports 30000.. on each host."""
    return [(host_name(h), 30000 + s) for h in range(hosts) for s in range(servers)]


def families(text: str, histograms: bool = True) -> list[tuple[str, list[str], list[str]]]:
    """(name, HELP/TYPE lines, samples) per metric family, in the page's order."""
    out: list[tuple[str, list[str], list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            out.append((line.split()[2], [line], []))
        elif line.startswith("#"):
            out[-1][1].append(line)
        elif line.strip():
            out[-1][2].append(line)
    if not histograms:
        out = [(n, h, s) for n, h, s in out if not any("TYPE" in x and "histogram" in x for x in h)]
    return out


def labelled(sample: str, instance: str) -> tuple[str, str]:
    """(series with the instance label added, value) of one sample line."""
    series, _, value = sample.rpartition(" ")
    label = f'instance="{instance}"'
    if series.endswith("}"):
        return f"{series[:-1]},{label}}}", value
    return f"{series}{{{label}}}", value


class Target:
    def __init__(self, hosts: int, servers: int, *, flip_every: float, histograms: bool = True):
        self.servers = [f"{h}:{p}" for h, p in fleet(hosts, servers)]
        self.flip_every = flip_every
        self.began = time.time()
        self.running = [1.0 + i % 7 for i in range(len(self.servers))]
        self.flips: list[tuple[float, str, float]] = []
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.pages: list[list[bytes | tuple[str, bytes]]] = []
        """Per server its page: static bytes, or (family, series) written again per scrape."""
        self.series = 0
        shape = families(FIXTURE.read_text(), histograms)
        for instance in self.servers:
            page: list[bytes | tuple[str, bytes]] = []
            text = ""
            for name, header, samples in shape:
                rows = [labelled(s, instance) for s in samples]
                self.series += len(rows)
                text += "\n".join(header) + "\n"
                if name in (RUNNING, TOKENS):  # one series each (one rank, one engine)
                    page += [text.encode(), (name, rows[0][0].encode())]
                    text = ""
                else:
                    text += "".join(f"{s} {v}\n" for s, v in rows)
            self.pages.append([*page, text.encode()])

    def page(self, index: int) -> bytes:
        """What server `index` serves now: its running requests, its counter grown."""
        with self.lock:
            running = self.running[index]
        tokens = (1000 + index) * 10.0 + TOK_S * (time.time() - self.began)
        out = []
        for part in self.pages[index]:
            if isinstance(part, bytes):
                out.append(part)
            else:
                value = running if part[0] == RUNNING else tokens
                out.append(part[1] + f" {value!r}\n".encode())
        return b"".join(out)

    def flip_forever(self, seed: int = 1) -> None:
        """One random server's running requests change to a value never seen before."""
        rng = random.Random(seed)
        value = 100.0
        while not self.halt.wait(self.flip_every * rng.uniform(0.5, 1.5)):
            value += 1
            index = rng.randrange(len(self.servers))
            with self.lock:
                self.running[index] = value
                self.flips.append((time.time(), self.servers[index], value))


def serve(target: Target, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            index = self.path.removeprefix("/metrics/")
            if index.isdigit() and int(index) < len(target.pages):
                body, kind = target.page(int(index)), "text/plain; version=0.0.4; charset=utf-8"
            elif self.path.startswith("/flips"):
                with target.lock:
                    body, kind = json.dumps(target.flips).encode(), "application/json"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:  # scrapes are not news
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=250)
    parser.add_argument("--servers", type=int, default=4, help="per host")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--flip-every", type=float, default=1.0)
    parser.add_argument("--no-histograms", action="store_true")
    args = parser.parse_args()
    target = Target(
        args.hosts, args.servers, flip_every=args.flip_every, histograms=not args.no_histograms
    )
    server = serve(target, args.port)
    size = sum(len(target.page(i)) for i in range(len(target.servers)))
    print(json.dumps({"series": target.series, "page_bytes": size}), flush=True)
    threading.Thread(target=target.flip_forever, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()

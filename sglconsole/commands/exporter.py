"""exporter: the fleet as Prometheus metrics and JSON over HTTP, with alerts, and no screen."""

from __future__ import annotations

import argparse
import logging
import sys

from sglconsole import config
from sglconsole.commands.registry import command, config_path, run_async
from sglconsole.errors import UsageError
from sglconsole.exporter import STOP_S  # the package alone: the service loads on use


@command(
    "exporter",
    "serve /metrics (Prometheus) and /status (status --json) and raise alerts, with no screen; "
    "changes no host",
)
def _exporter(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--listen",
        default="127.0.0.1:9464",
        metavar="HOST:PORT",
        help="where to serve HTTP (default 127.0.0.1:9464; ':9464' for every address)",
    )
    parser.add_argument(
        "--webhook",
        action="append",
        default=[],
        metavar="URL",
        help="POST alerts to this Alertmanager (its base URL gets /api/v2/alerts; a URL with a "
        "path is used as given); repeatable",
    )
    parser.add_argument(
        "--resend",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds between re-sending the alerts that still fire (default 60)",
    )
    parser.add_argument(
        "--hold",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds a new status must hold before it is news (default 5, as in the console)",
    )
    parser.add_argument(
        "--quiet",
        type=float,
        default=300.0,
        metavar="S",
        help="a flapping server alerts once per this many seconds unless it gets worse "
        "(default 300, as in the console)",
    )
    parser.add_argument(
        "--stop-timeout",
        type=float,
        default=STOP_S,
        metavar="S",
        help=f"on SIGTERM, at most this many seconds for alert deliveries, requests being "
        f"answered and SSH sessions to end; what is still going is named and cut short "
        f"(default {STOP_S:g}; keep it under systemd's TimeoutStopSec)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug lines too")

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.alerts.webhook import alert_url
        from sglconsole.exporter.http import parse_listen
        from sglconsole.exporter.service import run

        try:
            listen = parse_listen(args.listen)
            for url in args.webhook:
                alert_url(url)
            if args.stop_timeout < 0:
                raise ValueError(f"--stop-timeout {args.stop_timeout:g}: expected seconds >= 0")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        cfg = config.load(config_path(args))
        logging.basicConfig(
            level=logging.DEBUG if args.verbose else logging.INFO,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
            force=True,
        )
        # one line per HTTP request to the hosts' servers is noise in a service's journal
        logging.getLogger("httpx").setLevel(logging.WARNING)
        logging.getLogger("asyncssh").setLevel(logging.WARNING)
        try:
            return run_async(
                run(
                    cfg,
                    listen,
                    args.webhook,
                    resend_s=args.resend,
                    hold_s=args.hold,
                    quiet_s=args.quiet,
                    stop_s=args.stop_timeout,
                )
            )
        except OSError as exc:  # the port is taken, the address is not ours
            raise UsageError(f"--listen {args.listen}: {exc.strerror or exc}") from None

    return handle

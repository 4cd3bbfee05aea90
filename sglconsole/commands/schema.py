"""`sglconsole schema [hosts|status]`: the JSON Schema of hosts.yaml, or of `status --json`."""

from __future__ import annotations

import argparse
import json

from sglconsole.commands.registry import command

SCHEMAS = ("hosts", "status")


@command("schema", "print the JSON Schema of hosts.yaml (hosts, the default) or of status --json")
def _schema(parser: argparse.ArgumentParser):
    parser.add_argument("which", nargs="?", choices=SCHEMAS, default="hosts")

    def handle(args: argparse.Namespace) -> int:
        print(render(args.which), end="")
        return 0

    return handle


def render(which: str) -> str:
    if which == "status":
        from sglconsole.state.status_schema import status_schema

        schema = status_schema()
    else:
        from sglconsole.config.json_schema import hosts_schema

        schema = hosts_schema()
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"

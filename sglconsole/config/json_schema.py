"""The JSON Schema of hosts.yaml, from its pydantic models (`sglconsole schema hosts`).

schemas/hosts.schema.json in the repository is this, checked in for editors: a
`# yaml-language-server: $schema=./schemas/hosts.schema.json` line at the top
of a hosts.yaml gives completion and checking as it is typed. The models stay
the authority: `sglconsole check` also checks what a schema cannot (profiles
named by servers exist, jump hosts, GPUs used twice, ...).
"""

from __future__ import annotations

from typing import Any

from sglconsole.config.schema import HostsFile

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def hosts_schema() -> dict[str, Any]:
    schema = HostsFile.model_json_schema()
    host = schema["$defs"]["Host"]
    # `defaults:` may give the address (containers behind one Proxmox host): the models see the
    # file after defaults are merged into each host, the schema sees the file as written
    host["required"] = [key for key in host.get("required", []) if key != "address"]
    if not host["required"]:
        del host["required"]
    return {
        "$schema": DRAFT,
        "title": "sglconsole hosts.yaml",
        "description": "The fleet definition of sglconsole: hosts, their SGLang servers, and the"
        " profiles (proven launch configurations) they run.",
        **{key: value for key, value in schema.items() if key != "title"},
    }

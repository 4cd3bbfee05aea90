"""The published JSON Schemas: generated from the models, checked in up to date, and true to
real files and outputs (the example hosts.yaml, the demo's, `status --json`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from sglconsole.commands.schema import render

REPO = Path(__file__).parents[1]


@pytest.mark.parametrize("which", ["hosts", "status"])
def test_the_checked_in_schema_is_what_the_models_say(which):
    checked_in = (REPO / "schemas" / f"{which}.schema.json").read_text()
    assert checked_in == render(which), (
        f"schemas/{which}.schema.json is out of date: "
        f"python -m sglconsole schema {which} > schemas/{which}.schema.json"
    )


def test_the_schema_command_prints_it():
    result = subprocess.run(
        [sys.executable, "-m", "sglconsole", "schema"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and result.stdout == render("hosts")
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["properties"]) == {
        "hosts",
        "profiles",
        "defaults",
        "alert_command",
        "source",
        "routers",
    }


def test_the_example_hosts_yaml_names_the_schema_and_passes_it():
    text = (REPO / "hosts.yaml").read_text()
    assert text.splitlines()[0] == "# yaml-language-server: $schema=./schemas/hosts.schema.json"
    schema = json.loads((REPO / "schemas" / "hosts.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(text), schema)


def test_the_schema_accepts_what_the_loader_accepts_and_refuses_typos():
    schema = json.loads(render("hosts"))
    # the loader's forms: a command line as one string, numbers in env, a port as a string,
    # the address from defaults, a systemd unit launcher
    jsonschema.validate(
        {
            "defaults": {"address": "pve1.example"},
            "hosts": {
                "ct1": {
                    "exec_prefix": "pct exec 101 --",
                    "servers": [{"port": "30000", "profile": "p", "launcher": "systemd:x.service"}],
                }
            },
            "profiles": {"p": {"args": "--model-path /m --tp 2", "env": {"N": 1}}},
        },
        schema,
    )
    for broken in (
        {"hosts": {}, "profils": {}},
        {"hosts": {"h": {"address": "a", "servers": [{"port": 70000, "profile": "p"}]}}},
        {
            "hosts": {
                "h": {"address": "a", "servers": [{"port": 1, "profile": "p", "launcher": "x"}]}
            }
        },
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)

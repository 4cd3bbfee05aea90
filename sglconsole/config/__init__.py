"""hosts.yaml: its schema, loading it with errors that point at the line, editing it in place,
and the launch spec built from a (profile, server) pair."""

from sglconsole.config.load import CONFIG_ENV, check_file, discover, file_problems, load, parse
from sglconsole.config.schema import (
    Baseline,
    BaselineLevel,
    Canary,
    Config,
    Host,
    HostFields,
    HostsFile,
    Probe,
    Profile,
    Router,
    Server,
)

__all__ = [
    "CONFIG_ENV",
    "Baseline",
    "BaselineLevel",
    "Canary",
    "Config",
    "Host",
    "HostFields",
    "HostsFile",
    "Probe",
    "Profile",
    "Router",
    "Server",
    "check_file",
    "discover",
    "file_problems",
    "load",
    "parse",
]

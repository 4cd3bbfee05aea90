"""The fleet fixtures live in tests/fleets.py (a plugin for every test folder); re-exported for
old imports."""

from tests.fleets import SSH_MODE, demo_fleet, fleet_factory  # noqa: F401

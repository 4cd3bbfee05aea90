"""Widgets of the console: each shows one part of the fleet state."""

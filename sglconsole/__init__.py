"""sglconsole: a terminal operations console for SGLang GPU fleets."""

__version__ = "0.1.0"

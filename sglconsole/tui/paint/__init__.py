"""Pure renderers: fleet state in, Rich renderables out (no widgets, no I/O)."""

"""The Textual console: fleet tree on the left, the selected host or server on the right.

Layout of this package: ``app.py`` wires things together; ``paint/`` turns
fleet state into Rich renderables (pure); ``widgets/`` and ``screens/`` show
them; the other modules hold the console's own logic (alerts, gating of keys,
recording and replay, running actions) without any widget in sight.
"""

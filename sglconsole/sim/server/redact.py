"""What SGLang itself hides in /server_info's `launch_command`.

SGLang 0.5.23 (server_args.prepare_server_args ->
sampling/watermarking/core.py redact_watermark_command_line) joins the
argv with spaces and replaces only the --watermark-config value with
"<redacted>": API keys and tokens are shown as given, so the simulator
shows them too.
"""

from __future__ import annotations

REDACTED = "<redacted>"


def launch_command(argv: list[str]) -> str:
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
        elif arg.startswith("--watermark-config="):
            out.append(f"--watermark-config={REDACTED}")
        else:
            out.append(arg)
            hide_next = arg == "--watermark-config"
    return " ".join(out)

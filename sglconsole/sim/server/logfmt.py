"""SGLang's log line formats, as the simulated server writes them.

The prefix is SGLang's utils/common.py configure_logger
(``[%(asctime)s TP0] %(message)s``, datefmt ``%Y-%m-%d %H:%M:%S``). Which
fields a batch line has, and in which order, comes from the version's table
(versiontable.batch_fields; the newest version's when not given); the token
usage part comes from SGLang's pool stats and differs for hybrid models.
"""

from __future__ import annotations

import time

from sglconsole.sim import versiontable


def stamp(prefix: str = "", now: float | None = None) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if now is None else now))
    return f"[{when}{' ' + prefix if prefix else ''}]"


def line(message: str, prefix: str = "TP0") -> str:
    return f"{stamp(prefix)} {message}"


def decode_usage(
    token: int, usage: float, hybrid: str | None, mamba_used: int = 0, mamba_usage: float = 0.0
) -> str:
    if hybrid == "ssm":
        return (
            f"#full token: {token}, full token usage: {usage:.2f}, mamba num: {mamba_used}, "
            f"mamba usage: {mamba_usage:.2f}, "
        )
    return f"#token: {token}, token usage: {usage:.2f}, "


def prefill_usage(usage: float, hybrid: str | None, mamba_usage: float = 0.0) -> str:
    if hybrid == "ssm":
        return f"full token usage: {usage:.2f}, mamba usage: {mamba_usage:.2f}, "
    return f"token usage: {usage:.2f}, "


def batch_message(head: str, fields: list[dict], values: dict[str, str]) -> str:
    """`head, label: value, ...` in the table's order; optional fields only when given a value.

    `values` maps a label (or a slot name such as token_usage_msg, whose text
    brings its own trailing ", ") to its formatted value.
    """
    parts = []
    for field in fields:
        if "slot" in field:
            if field["slot"] in values:
                parts.append(values[field["slot"]].removesuffix(", "))
        elif field["label"] in values:
            parts.append(f"{field['label']}: {values[field['label']]}")
        elif not field["optional"]:
            parts.append(
                f"{field['label']}: 0"
            )  # a field SGLang always writes that the sim does not model
    return f"{head}, " + ", ".join(parts)


def decode_line(
    *,
    fields: list[dict] | None = None,
    running_req: int,
    token: int,
    token_usage: float,
    accept_len: float | None,
    accept_rate: float | None,
    cuda_graph: bool,
    gen_throughput: float,
    queue_req: int,
    hybrid: str | None = None,
    prefix: str = "TP0",
    mfu: tuple[float, float, float] | None = None,
) -> str:
    mamba_usage = min(1.0, running_req / 64)
    values = {
        "#running-req": str(running_req),
        "token_usage_msg": decode_usage(token, token_usage, hybrid, running_req, mamba_usage),
        "cuda graph": str(cuda_graph),
        "gen throughput (token/s)": f"{gen_throughput:.2f}",
        "#queue-req": str(queue_req),
    }
    if accept_len is not None:
        values.update({"accept len": f"{accept_len:.2f}", "accept rate": f"{accept_rate or 0:.2f}"})
    if mfu is not None:  # --enable-mfu-metrics
        values.update(
            {
                "est. decode TFLOPS/s (per GPU)": f"{mfu[0]:.2f}",
                "est. read BW (GB/s per GPU)": f"{mfu[1]:.2f}",
                "est. write BW (GB/s per GPU)": f"{mfu[2]:.2f}",
            }
        )
    fields = fields or versiontable.batch_fields(versiontable.newest(), "decode")
    return line(batch_message("Decode batch", fields, values), prefix)


def prefill_line(
    *,
    fields: list[dict] | None = None,
    new_seq: int,
    new_token: int,
    cached_token: int,
    token_usage: float,
    running_req: int,
    queue_req: int,
    input_throughput: float,
    cuda_graph: bool = False,
    hybrid: str | None = None,
    prefix: str = "TP0",
) -> str:
    values = {
        "#new-seq": str(new_seq),
        "#new-token": str(new_token),
        "#cached-token": str(cached_token),
        "token_usage_msg": prefill_usage(token_usage, hybrid, min(1.0, running_req / 64)),
        "#running-req": str(running_req),
        "#queue-req": str(queue_req),
        "#pending-token": "0",
        "cuda graph": str(cuda_graph),
        "input throughput (token/s)": f"{input_throughput:.2f}",
    }
    fields = fields or versiontable.batch_fields(versiontable.newest(), "prefill")
    return line(batch_message("Prefill batch", fields, values), prefix)


def server_args_repr(args: dict) -> str:
    """The dataclass repr SGLang logs first in every lifetime (`ServerArgs(model_path='...', ...)`,
    as the real 0.5.12 and 0.5.17 logs show)."""
    return "ServerArgs(" + ", ".join(f"{name}={value!r}" for name, value in args.items()) + ")"

"""SGLang's log line formats, as the simulated server writes them.

Modelled on SGLang 0.5.23: utils/common.py configure_logger
(``[%(asctime)s TP0] %(message)s``, datefmt ``%Y-%m-%d %H:%M:%S``) and
scheduler_components/metrics_reporter.py (decode/prefill lines, whose token
usage part comes from pool_stats_observer and differs for hybrid models).
"""

from __future__ import annotations

import time


def stamp(prefix: str = "", now: float | None = None) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() if now is None else now))
    return f"[{when}{' ' + prefix if prefix else ''}]"


def line(message: str, prefix: str = "TP0") -> str:
    return f"{stamp(prefix)} {message}"


def decode_usage(token: int, usage: float, hybrid: str | None, mamba_used: int = 0, mamba_usage: float = 0.0) -> str:
    if hybrid == "ssm":
        return f"#full token: {token}, full token usage: {usage:.2f}, mamba num: {mamba_used}, mamba usage: {mamba_usage:.2f}, "
    return f"#token: {token}, token usage: {usage:.2f}, "


def prefill_usage(usage: float, hybrid: str | None, mamba_usage: float = 0.0) -> str:
    if hybrid == "ssm":
        return f"full token usage: {usage:.2f}, mamba usage: {mamba_usage:.2f}, "
    return f"token usage: {usage:.2f}, "


def decode_line(
    *,
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
    msg = f"Decode batch, #running-req: {running_req}, " + decode_usage(token, token_usage, hybrid, running_req, mamba_usage)
    if accept_len is not None:
        msg += f"accept len: {accept_len:.2f}, accept rate: {accept_rate or 0:.2f}, "
    msg += f"cuda graph: {cuda_graph}, gen throughput (token/s): {gen_throughput:.2f}, #queue-req: {queue_req}"
    if mfu is not None:  # --enable-mfu-metrics
        msg += (f", est. decode TFLOPS/s (per GPU): {mfu[0]:.2f}, est. read BW (GB/s per GPU): {mfu[1]:.2f}, "
                f"est. write BW (GB/s per GPU): {mfu[2]:.2f}")
    return line(msg, prefix)


def prefill_line(
    *,
    new_seq: int,
    new_token: int,
    cached_token: int,
    token_usage: float,
    running_req: int,
    queue_req: int,
    input_throughput: float,
    hybrid: str | None = None,
    prefix: str = "TP0",
) -> str:
    msg = (
        f"Prefill batch, #new-seq: {new_seq}, #new-token: {new_token}, #cached-token: {cached_token}, "
        + prefill_usage(token_usage, hybrid, min(1.0, running_req / 64))
        + f"#running-req: {running_req}, #queue-req: {queue_req}, #pending-token: 0, "
        f"cuda graph: False, input throughput (token/s): {input_throughput:.2f}"
    )
    return line(msg, prefix)

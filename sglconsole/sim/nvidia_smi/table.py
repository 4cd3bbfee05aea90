"""The default ``nvidia-smi`` table and ``nvidia-smi -L`` of the simulated GPUs."""

from __future__ import annotations

from sglconsole.sim.nvidia_smi.format import format_clock_time

_BAR = "+" + "-" * 89 + "+"
_GPU_BAR = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
_TABLE_HEAD = (
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
)
_PROC_HEAD = (
    "| Processes:                                                                              |\n"
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
    "|        ID   ID                                                               Usage      |\n"
    "|=========================================================================================|\n"
)


def _clip_left(text: str, width: int) -> str:
    return text if len(text) <= width else "..." + text[-(width - 3) :]


def render_table(states: list[dict], *, driver: str, cuda: str, now: float) -> str:
    """The default ``nvidia-smi`` summary (driver 580 layout, 91 columns)."""
    out = [f"{format_clock_time(now)}       \n", _BAR + "\n"]
    out.append(f"| NVIDIA-SMI {driver:<23}Driver Version: {driver:<15}CUDA Version: {cuda:<9}|\n")
    out.append(_GPU_BAR + "\n")
    out.append(_TABLE_HEAD)
    for state in states:
        model = state["model"]
        name = state["name"] if len(state["name"]) <= 30 else state["name"][:27] + "..."
        persistence_mode = "On" if model.persistence else "Off"
        ecc = str(state["ecc_unc"]) if model.ecc else "Off"
        out.append(
            f"|{state['index']:>4}  {name:<31}{persistence_mode:<3} |   "
            f"{state['bus_id']:<16} {'Off':>3} |{ecc:>21} |\n"
        )
        fan = "N/A" if state["fan"] is None else f"{state['fan']}%"
        pwr = f"{int(state['power'])}W"
        cap = f"{int(state['power_limit'])}W"
        mem = f"{state['mem_used']}MiB".rjust(11) + " / " + f"{state['mem_total']}MiB".rjust(9)
        out.append(
            f"|{fan:>4}  {state['temp']:>3}C    {state['pstate']:<3}{pwr:>15} / {cap:>5} |{mem} |"
            f"{str(state['util']) + '%':>8}{'Default':>13} |\n"
        )
        mig = state["mig"] or "N/A"
        out.append(f"|{'':41}|{'':24}|{mig:>21} |\n")
        out.append(_GPU_BAR + "\n")
    out.append("\n")
    out.append(_BAR + "\n")
    out.append(_PROC_HEAD)
    rows = [(state["index"], proc) for state in states for proc in state["procs"]]
    if not rows:
        out.append(f"|  {'No running processes found':<87}|\n")
    for idx, (pid, pname, mem) in rows:
        out.append(
            f"|{idx:>5}   N/A  N/A {pid:>15}{'C':>7}   {_clip_left(pname, 35):<35}"
            f"{str(mem) + 'MiB':>11} |\n"
        )
    out.append(_BAR + "\n")
    return "".join(out)


def render_list(states: list[dict]) -> str:
    return "".join(
        f"GPU {state['index']}: {state['name']} (UUID: {state['uuid']})\n" for state in states
    )


# =========================================================================== -q / -q -x
#
# One tree renders both the XML (tags) and the text (labels). Node:
#   (tag, label, value[, opts])  value: str | (xml_str, text_str) | list (group) | _Raw
#   tag None -> text only; label None -> XML only.
#   opts: indent (extra text indent levels), width (text key column), flatten

"""Stop one SGLang server on this host: verified, whole tree, never by name.

Run as ``python -c SOURCE '{"pid":..,"start_ticks":..,"argv":[..],"grace":20}'``.
Refuses (exit 3) if the PID is no longer the process the console saw (start
time or argv changed: PID reuse). Signals the server's process group when it
leads one, else each member; members are the server's descendants plus
anything still in its process group and session (children reparented to
PID 1 after an earlier kill included; a standalone weight-cache daemon
excepted), and anything in a group or session a member leads (a JIT
build's ninja runs in a session of its own, each nvcc in a group of its own).
Members are looked for again while waiting, so what a dying member started
last is stopped too. SIGTERM, a grace period, then SIGKILL; every signal
re-checks the target's start time. Build tools that started after the server
and now hang off PID 1 unclaimed are reported as orphans, never signalled
(nothing is killed by name). Prints JSON lines.
"""

import json
import os
import signal
import sys
import time


def out(**obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def stat(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    return {
        "pid": pid,
        "state": fields[0],
        "ppid": int(fields[1]),
        "pgid": int(fields[2]),
        "sid": int(fields[3]),
        "start_ticks": int(fields[19]),
        "comm": head.partition("(")[2],
    }


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    parts = [part.decode("utf-8", "replace") for part in raw.split(b"\0")]
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def table():
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            process = stat(int(name))
            if process:
                procs[process["pid"]] = process
    return procs


def members(root, procs, found=None, led=None):
    """pid -> start ticks of the server's processes; `led` collects the groups and sessions
    they lead (kept after a leader dies: its orphans still carry the ids)."""
    found = dict(found or {root["pid"]: root["start_ticks"]})
    led = led if led is not None else set()
    changed = True
    while changed:
        changed = False
        for process in procs.values():
            if process["pid"] in found:
                if process["start_ticks"] == found[process["pid"]]:
                    for kind in ("pgid", "sid"):
                        if process[kind] == process["pid"]:
                            led.add((kind, process["pid"]))
                continue
            if process["ppid"] in found or (
                (
                    (process["pgid"], process["sid"]) == (root["pgid"], root["sid"])
                    or ("pgid", process["pgid"]) in led
                    or ("sid", process["sid"]) in led
                )
                and not weight_cache_daemon(process["pid"])
            ):
                found[process["pid"]] = process["start_ticks"]
                changed = True
    return found


def weight_cache_daemon(pid):
    """A standalone weight-cache daemon started from the server's session keeps the weights
    across restarts by design: never taken along by group or session, only as a child."""
    argv = cmdline(pid) or []
    for index, arg in enumerate(argv[:8]):
        if arg == "-m":
            return argv[index + 1 : index + 2] == ["sglang.srt.weight_cache.daemon"]
        if arg.endswith("sglang/srt/weight_cache/daemon.py"):
            return True
    return False


BUILD_TOOLS = ("ninja", "nvcc", "cicc", "ptxas", "cudafe++", "fatbinary", "nvlink")


def orphans(root, group, procs):
    """Build tools that started after the server and now hang off PID 1, not known as its:
    what a JIT compile whose scheduler died earlier leaves. Reported, never signalled."""
    uid = root.get("uid")
    found = []
    for process in procs.values():
        if (
            process["pid"] in group
            or process["ppid"] != 1
            or process["start_ticks"] < root["start_ticks"]
        ):
            continue
        argv = cmdline(process["pid"]) or []
        name = os.path.basename(argv[0]) if argv else process["comm"]
        if name.split()[0] in BUILD_TOOLS and owner(process["pid"]) == uid:
            found.append({"pid": process["pid"], "args": " ".join(argv)[:200]})
    return found


def owner(pid):
    try:
        return os.stat("/proc/%d" % pid).st_uid
    except OSError:
        return None


def alive(pid, ticks):
    process = stat(pid)
    return process is not None and process["start_ticks"] == ticks and process["state"] != "Z"


def send(pid, ticks, sig):
    if alive(pid, ticks):
        try:
            os.kill(pid, sig)
            return True
        except OSError:
            return False
    return False


def main():
    args = json.loads(sys.argv[1])
    pid, ticks, argv = int(args["pid"]), int(args["start_ticks"]), args.get("argv")
    grace = float(args.get("grace", 20))
    root = stat(pid)
    if root is None:
        out(stage="identity", ok=False, detail="process %d is gone" % pid)
        return 4
    if root["start_ticks"] != ticks or (argv is not None and cmdline(pid) != argv):
        out(
            stage="identity",
            ok=False,
            detail="pid %d is not the server we saw (start time or argv changed: "
            "PID reused); nothing signalled" % pid,
        )
        return 3
    root["uid"] = owner(pid)
    procs = table()
    led = set()
    group = members(root, procs, led=led)
    out(stage="identity", ok=True, members=sorted(group), pgid=root["pgid"], sid=root["sid"])
    if root["pgid"] == pid:
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            pass
    for member, member_ticks in group.items():
        send(member, member_ticks, signal.SIGTERM)
    out(stage="term", pids=sorted(group))
    deadline = time.time() + grace
    remaining = [member for member, member_ticks in group.items() if alive(member, member_ticks)]
    while remaining and time.time() < deadline:
        time.sleep(0.1)
        more = members(root, table(), group, led)
        for late in set(more) - set(group):  # started by a member while it was stopping
            group[late] = more[late]
            send(late, more[late], signal.SIGTERM)
        now = [member for member, member_ticks in group.items() if alive(member, member_ticks)]
        if len(now) != len(remaining):
            out(stage="waiting", remaining=now)
        remaining = now
    if remaining:
        for member in remaining:
            send(member, group[member], signal.SIGKILL)
        out(stage="kill", pids=remaining)
        end = time.time() + 5
        while time.time() < end and any(alive(member, group[member]) for member in remaining):
            time.sleep(0.1)
    survivors = [member for member, member_ticks in group.items() if alive(member, member_ticks)]
    zombies = []
    for member, member_ticks in group.items():
        process = stat(member)
        if (
            process is not None
            and process["start_ticks"] == member_ticks
            and process["state"] == "Z"
        ):
            zombies.append(
                {"pid": member, "ppid": process["ppid"], "parent": cmdline(process["ppid"]) or []}
            )
    left = orphans(root, group, table())
    out(
        stage="done",
        survivors=survivors,
        zombies=zombies,
        orphans=left,
        escalated=bool(remaining),
    )
    return 0 if not survivors else 5


if __name__ == "__main__":
    sys.exit(main())

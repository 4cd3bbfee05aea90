"""The read-only watcher sglconsole runs on each host, over one SSH channel.

Sent as ``python3 -c <this file's source> <json args>``: standard library
only, no files written, nothing changed on the host. It prints JSON lines:

  {"t": "procs", ...}  SGLang processes (main, children, GPU holders), when they change
  {"t": "apps", ...}   nvidia-smi compute-apps, when they change
  {"t": "log", "path", "ino", "off", "lines"}   new complete lines of a followed log
  {"t": "log_state", "path", "state", ...}      missing / rotated / truncated / error
  {"t": "hb", "time"}  a heartbeat every `heartbeat` seconds (default: every interval) while
                       the processes stay as they were (the scan ran)
  {"t": "mem", ...}    MemAvailable and the RSS of those processes, every memory_interval

and reads JSON commands on stdin ({"follow": {path: {"ino", "off"}}}); EOF on
stdin (the console went away) ends it. Log offsets let the console resume
after a reconnect with no line lost or repeated; rotation and truncation are
followed like ``tail -F``.
"""

import json
import os
import select
import subprocess
import sys
import threading
import time

from host_memory import memory_report  # inlined by source()
from log_follow import Follow, out  # inlined by source()

ENV_PREFIXES = ("SGLANG_", "CUDA_", "NCCL_", "TORCH_", "PYTORCH_", "HF_", "OMP_", "NVIDIA_")


def read(path):
    try:
        with open(path, "rb", buffering=0) as handle:
            return (
                handle.read()
            )  # read(n) with a large n allocates n bytes first: costly at every scan
    except (OSError, IOError):
        return None


def readlink(path):
    try:
        return os.readlink(path)
    except (OSError, IOError):
        return None


def is_server_argv(argv):
    """python [opts] -m sglang.launch_server ..., .../sglang/launch_server.py, or sglang serve."""
    for index, arg in enumerate(argv[:8]):
        if arg == "-c":
            return False  # python -c CODE (like this watcher) is never a server
        if arg == "-m":
            return index + 1 < len(argv) and argv[index + 1] == "sglang.launch_server"
        if arg.endswith("sglang/launch_server.py"):
            return True
        if os.path.basename(arg) == "sglang" and argv[index + 1 : index + 2] == ["serve"]:
            return True
    return False


WEIGHT_CACHE_DAEMON = "sglang.srt.weight_cache.daemon"


def is_weight_cache_daemon(argv):
    """python -m sglang.srt.weight_cache.daemon (0.5.17+): holds weights in GPU memory by design."""
    for index, arg in enumerate(argv[:8]):
        if arg == "-c":
            return False
        if arg == "-m":
            return argv[index + 1 : index + 2] == [WEIGHT_CACHE_DAEMON]
        if arg.endswith("sglang/srt/weight_cache/daemon.py"):
            return True
    return False


def is_sglang_related(argv, comm):
    head = argv[0] if argv else ""
    return (
        head.startswith("sglang")
        or comm.startswith("sglang")
        or is_server_argv(argv)
        or is_weight_cache_daemon(argv)
    )


class Procs:
    def __init__(self, env_names=()):
        self.env_names = set(env_names)
        self.own_pid, self.parent = os.getpid(), os.getppid()
        self.cmdlines = {}  # (pid, start) -> argv (cmdlines rarely change; children rename once)
        self.last = None
        self.btime = 0
        for line in (read("/proc/stat") or b"").decode().splitlines():
            if line.startswith("btime "):
                self.btime = int(line.split()[1])
        self.ticks_per_second = os.sysconf("SC_CLK_TCK")

    def stat(self, pid):
        raw = read("/proc/%s/stat" % pid)
        if not raw:
            return None
        text = raw.decode("utf-8", "replace")
        head, _, rest = text.rpartition(")")
        fields = rest.split()
        if len(fields) < 20:
            return None
        return {
            "pid": int(pid),
            "comm": head.partition("(")[2],
            "state": fields[0],
            "ppid": int(fields[1]),
            "pgid": int(fields[2]),
            "sid": int(fields[3]),
            "start_ticks": int(fields[19]),
        }

    def argv(self, process):
        key = (process["pid"], process["start_ticks"])
        argv = self.cmdlines.get(key)
        if argv is None or (argv and "python" in os.path.basename(argv[0])):
            raw = read("/proc/%s/cmdline" % process["pid"]) or b""
            argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0")]
            while argv and argv[-1] == "":
                argv.pop()
            self.cmdlines[key] = argv
        return argv

    def scan(self, gpu_pids):
        table = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                process = self.stat(name)
                if process:
                    table[process["pid"]] = process
        keep = {}
        for pid, process in table.items():
            argv = self.argv(process) if process["state"] != "Z" else []
            process["argv"] = argv
            if pid in (self.own_pid, self.parent):
                continue  # this watcher and the shell that started it
            if is_sglang_related(argv, process["comm"]) or pid in gpu_pids:
                keep[pid] = process
        mains = set(pid for pid, process in keep.items() if is_server_argv(process["argv"]))
        groups = set((table[main_pid]["pgid"], table[main_pid]["sid"]) for main_pid in mains)
        for pid, process in table.items():
            if process["ppid"] in mains or (process["pgid"], process["sid"]) in groups:
                process.setdefault("argv", self.argv(process) if process["state"] != "Z" else [])
                keep[pid] = process
        for pid in mains:
            self.details(keep[pid])
            keep[pid]["ancestors"] = ancestors(table, pid)
        for process in keep.values():  # its GPUs by CUDA_VISIBLE_DEVICES, as a server's
            if process["pid"] not in mains and is_weight_cache_daemon(process.get("argv") or []):
                self.details(process)
        for process in keep.values():
            process["start"] = self.btime + process["start_ticks"] / float(self.ticks_per_second)
            process["main"] = process["pid"] in mains
        self.cmdlines = dict(
            (key, cmdline) for key, cmdline in self.cmdlines.items() if key[0] in table
        )
        return sorted(keep.values(), key=lambda process: process["pid"])

    def details(self, process):
        pid = process["pid"]
        env = {}
        for item in (read("/proc/%s/environ" % pid) or b"").split(b"\0"):
            key, _, value = item.decode("utf-8", "replace").partition("=")
            if key.startswith(ENV_PREFIXES) or key in self.env_names:
                env[key] = value
        process["env"] = env
        process["cwd"] = readlink("/proc/%s/cwd" % pid)
        process["stdout"] = readlink("/proc/%s/fd/1" % pid)
        process["exe"] = readlink("/proc/%s/exe" % pid)


def ancestors(table, pid, depth=2):
    """The names (comm) of a server's parent and grandparent: a container engine's shim or init
    there says the server may run in a container."""
    names = []
    ppid = table[pid]["ppid"]
    while ppid in table and len(names) < depth:
        names.append(table[ppid]["comm"])
        ppid = table[ppid]["ppid"]
    return names


def listen_ports():
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in (read(name) or b"").decode().splitlines()[1:]:
            parts = line.split()
            if len(parts) > 3 and parts[3] == "0A":
                ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def compute_apps():
    try:
        proc = subprocess.run(
            [
                "nvidia-smi",
                "--query-compute-apps=pid,process_name,used_memory,gpu_uuid",
                "--format=csv,noheader,nounits",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=10,
        )
        return (
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace")[-500:],
        )
    except FileNotFoundError:
        return 127, "", "nvidia-smi: command not found"
    except subprocess.TimeoutExpired:
        return None, "", "nvidia-smi --query-compute-apps timed out after 10s"
    except OSError as exc:
        return 126, "", str(exc)


class Changes(object):
    """inotify on the folders of the followed logs, so a new line wakes us at once and an idle
    host costs nothing; None where inotify is unavailable (then we poll)."""

    MASK = (
        0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200
    )  # modify attrib close_write moved create delete

    def __init__(self):
        import ctypes
        import ctypes.util

        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.descriptor = self.libc.inotify_init1(os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        if self.descriptor < 0:
            raise OSError("inotify_init1 failed")
        self.folders = {}

    def watch(self, path):
        """True when changes to `path` will wake us (its folder exists and is watched)."""
        folder = os.path.dirname(path) or "."
        if folder not in self.folders:
            watch_id = self.libc.inotify_add_watch(self.descriptor, folder.encode(), self.MASK)
            if watch_id < 0:
                return False
            self.folders[folder] = watch_id
        return True

    def drain(self):
        try:
            while os.read(self.descriptor, 65536):
                pass
        except OSError:
            pass


def commands(follows, lock, args, stop, wake):
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
        except ValueError:
            continue
        with lock:
            for path, pos in (cmd.get("follow") or {}).items():
                if path not in follows:
                    follows[path] = Follow(
                        path, pos.get("ino"), pos.get("off"), args.get("backlog", 65536)
                    )
            for path in cmd.get("unfollow") or []:
                follows.pop(path, None)
        os.write(wake, b"x")
    stop.set()
    os.write(wake, b"x")


def main():
    args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    interval = float(args.get("interval", 2.0))
    heartbeat = float(args.get("heartbeat", interval))
    apps_interval = float(args.get("apps_interval", 30.0))
    poll = float(args.get("log_poll", 0.1))
    procs = Procs(args.get("env_names") or ())
    if args.get("once"):
        returncode, stdout, stderr = compute_apps() if args.get("apps", True) else (None, "", "")
        gpu_pids = set(
            int(line.split(",")[0])
            for line in stdout.splitlines()
            if line.split(",")[0].strip().isdigit()
        )
        out({"t": "apps", "rc": returncode, "out": stdout, "err": stderr})
        out(
            {
                "t": "procs",
                "procs": procs.scan(gpu_pids),
                "ports": listen_ports(),
                "time": time.time(),
            }
        )
        return
    follows, lock, stop = {}, threading.Lock(), threading.Event()
    for path, pos in (args.get("follow") or {}).items():
        follows[path] = Follow(path, pos.get("ino"), pos.get("off"), args.get("backlog", 65536))
    wake_r, wake_w = os.pipe()
    reader = threading.Thread(target=commands, args=(follows, lock, args, stop, wake_w))
    reader.daemon = True
    reader.start()
    try:
        changes = Changes()
    except (OSError, AttributeError, TypeError):
        changes = None
    next_scan = next_apps = next_memory = next_heartbeat = 0.0
    memory_interval = float(args.get("memory_interval", 0) or 0)  # 0: not asked for
    last_procs = last_apps = None
    found = []
    gpu_pids = set()
    while not stop.is_set():
        now = time.time()
        if now >= next_apps:
            next_apps = now + apps_interval
            returncode, stdout, stderr = compute_apps()
            if (returncode, stdout) != last_apps:
                last_apps = (returncode, stdout)
                out({"t": "apps", "rc": returncode, "out": stdout, "err": stderr})
            gpu_pids = set(
                int(line.split(",")[0])
                for line in stdout.splitlines()
                if line.split(",")[0].strip().isdigit()
            )
        if now >= next_scan:
            next_scan = now + interval
            found = procs.scan(gpu_pids)
            # no listening ports here: /proc/net/tcp costs milliseconds on a busy host (the kernel
            # walks every socket); only the one-shot snapshots before an action read it
            snapshot = {"t": "procs", "procs": found}
            key = json.dumps(
                [
                    [
                        process["pid"],
                        process["start_ticks"],
                        process["state"],
                        process["ppid"],
                        process.get("argv"),
                        process.get("stdout"),
                    ]
                    for process in found
                ]
            )
            if key != last_procs:
                if last_procs is not None:
                    next_apps = now  # processes came or went: who holds GPU memory now?
                last_procs = key
                snapshot["time"] = now
                out(snapshot)
                next_heartbeat = now + heartbeat
            elif now >= next_heartbeat:
                out({"t": "hb", "time": now})
                next_heartbeat = now + heartbeat
        if memory_interval and now >= next_memory:
            next_memory = now + memory_interval
            out(memory_report(found))
        with lock:
            watched = True
            for follow in list(follows.values()):
                watched = (changes is not None and changes.watch(follow.path)) and watched
                try:
                    follow.poll()
                except (OSError, IOError) as exc:
                    follow.note("error", error=str(exc))
                    follow.handle = None
        soonest = min(next_scan, next_apps, next_memory if memory_interval else next_scan)
        timeout = max(0.0, soonest - time.time())
        if not watched:
            timeout = min(timeout, poll)  # a folder we cannot watch (yet): poll it
        ready = select.select(
            [descriptor for descriptor in (wake_r, changes and changes.descriptor) if descriptor],
            [],
            [],
            timeout,
        )[0]
        if changes is not None and changes.descriptor in ready:
            changes.drain()
        if wake_r in ready:
            os.read(wake_r, 4096)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass

"""Start one SGLang server on this host, detached from the SSH session.

Run as ``python -c SOURCE '{"argv":[..],"env":{..},"cwd":..,"log":..}'``.
The server gets its own session (setsid), stdin from /dev/null and its
output appended to the log, so it survives the connection that started it
and the channel never waits on it. Prints one JSON line: the new pid, its
session, and where in the log its output starts.
"""

import json
import os
import subprocess
import sys
import time

DROP = ("SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "SSH_ORIGINAL_COMMAND")


def tail(path, limit=30):
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - 16384))
            return handle.read().decode("utf-8", "replace").splitlines()[-limit:]
    except OSError:
        return []


def main():
    args = json.loads(sys.argv[1])
    if args.get("exact_env"):
        env = dict(args["env"])
    else:
        env = dict((name, value) for name, value in os.environ.items() if name not in DROP)
        env.update(args.get("env") or {})
    log = args["log"]
    folder = os.path.dirname(log)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder)
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    log_stat = os.fstat(descriptor)
    try:
        child = subprocess.Popen(
            args["argv"],
            stdin=subprocess.DEVNULL,
            stdout=descriptor,
            stderr=subprocess.STDOUT,
            cwd=args.get("cwd") or None,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        print(json.dumps({"ok": False, "error": "cannot start %s: %s" % (args["argv"][0], exc)}))
        return 2
    os.close(descriptor)
    time.sleep(float(args.get("settle", 0.05)))
    code = child.poll()
    info = {
        "ok": code is None,
        "pid": child.pid,
        "exit_code": code,
        "log_ino": log_stat.st_ino,
        "log_off": log_stat.st_size,
        "my_sid": os.getsid(0),
    }
    try:
        info["sid"] = os.getsid(child.pid)
        with open("/proc/%d/stat" % child.pid) as handle:
            info["start_ticks"] = int(handle.read().rpartition(")")[2].split()[19])
    except OSError:
        pass
    if code is not None:
        info["log_tail"] = tail(log)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())

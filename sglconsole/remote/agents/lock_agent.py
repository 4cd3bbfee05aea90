"""Hold this host's lock for one server while an action runs (two consoles never act at once).

Run as ``python -c SOURCE '{"path": .., "holder": {..}, "wait": seconds}'``. Takes an
exclusive flock on the file, writes who holds it, prints {"locked": true} and
keeps the lock until its stdin closes (the action ended, or the console or
its connection died: the kernel releases the lock with the process). If
another console holds it, waits up to `wait` seconds, then prints who holds it.
"""

import fcntl
import json
import os
import sys
import time


def main():
    args = json.loads(sys.argv[1])
    path = args["path"]
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    deadline = time.time() + float(args.get("wait", 0))
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.time() >= deadline:
                os.lseek(descriptor, 0, 0)
                holder = os.read(descriptor, 4096).decode("utf-8", "replace")
                try:
                    holder = json.loads(holder)
                except ValueError:
                    holder = {"raw": holder}
                print(json.dumps({"locked": False, "holder": holder}))
                sys.stdout.flush()
                return 3
            time.sleep(0.2)
    os.ftruncate(descriptor, 0)
    os.lseek(descriptor, 0, 0)
    holder = dict(args.get("holder") or {})
    holder["pid"] = os.getpid()
    os.write(descriptor, json.dumps(holder).encode())
    print(json.dumps({"locked": True}))
    sys.stdout.flush()
    sys.stdin.read()  # until the console lets go (or goes away)
    return 0


if __name__ == "__main__":
    sys.exit(main())

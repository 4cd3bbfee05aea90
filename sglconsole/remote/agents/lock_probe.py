"""Whether an action holds a server's lock now (lock_agent's flock), read-only: never takes it.

Run as ``python -c SOURCE PATH``. Prints {"held": true, "holder": {...}} when the file's inode is
among /proc/locks' FLOCK entries (another console's action, or this console's CLI), else
{"held": false}. Taking the lock to test it would race an action that starts at that moment.
"""

import json
import os
import sys


def main():
    path = sys.argv[1]
    try:
        inode = os.stat(path).st_ino
        with open("/proc/locks") as locks:
            entries = locks.read().splitlines()
    except OSError:
        print(json.dumps({"held": False}))
        return 0
    held = False
    for entry in entries:
        fields = entry.split()
        if "FLOCK" in fields and len(fields) > 5 and fields[5].rsplit(":", 1)[-1] == str(inode):
            held = True
    holder = {}
    if held:
        try:
            with open(path) as file:
                holder = json.loads(file.read() or "{}")
        except (OSError, ValueError):
            holder = {}
    print(json.dumps({"held": held, "holder": holder}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

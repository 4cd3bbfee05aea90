"""The read-only container watcher sglconsole runs on each host, over one SSH channel.

Sent as ``python3 -c <this file's source> <json args>``: standard library only (3.6+), nothing
changed on the host. With the host's own CLIs (``docker``, ``podman`` as its PATH finds them;
rootful or rootless is the login's) it prints JSON lines:

  {"t": "engine", "engine", "state", "detail"}   ok / absent / down / denied / error, on change
  {"t": "containers", "engine", "inspect", "images"}   `ps -a` + `inspect` of every container
                                                  and `image inspect` of their images, on change
  {"t": "clog", "id", "lines"}     new lines of a followed container (`logs --timestamps`)
  {"t": "clog_end", "id", "status"}    its `logs --follow` ended (the container stopped)
  {"t": "hb", "time"}              a heartbeat every interval

and reads JSON commands on stdin: {"follow": {ID: {"engine": E, "since": RFC3339}}} starts
`E logs --follow --timestamps --since SINCE ID` (stdout and stderr together: SGLang logs to
stderr); {"survey": true} inspects every container now. EOF on stdin (the console went away)
ends it and its followers.
"""

import json
import os
import select
import subprocess
import sys
import threading
import time

ENGINES = ("docker", "podman")  # remote.monitor waits for a word on each (core.containers)
LISTING = "{{.ID}} {{.State}}"  # a Go template both engines' `ps --format` take
FULL_S = 60.0  # `inspect` at least this often, whatever `ps` says
QUIET_S = 60.0  # an engine absent or down is asked again this often, not at every interval
CALL_TIMEOUT_S = 30  # a daemon that does not answer `ps` in this long is reported, not waited on
BATCH_WAIT_S = 0.05  # lines that arrive together go out together

LOCK = threading.Lock()


def out(obj):
    with LOCK:
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def which(name):
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def call(argv):
    """(status, stdout, stderr) of argv; status None when it did not end in time."""
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        return 127, "", str(exc)
    try:
        stdout, stderr = process.communicate(timeout=CALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return None, "", "no answer in %d s" % CALL_TIMEOUT_S
    return process.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")


def state_of(status, stderr):
    """ok; absent (no such command); down (its daemon does not run: a CLI alone is no engine);
    denied (this login may not use it); error."""
    if status == 0:
        return "ok", None
    detail = (stderr.strip().splitlines() or ["exit %s" % status])[-1][-300:]
    text = stderr.lower()
    if status == 127:
        return "absent", None
    if "permission denied" in text:
        return "denied", detail
    if "cannot connect to the docker daemon" in text or "is the docker daemon running" in text:
        return "down", detail
    return "error", detail


def survey(engine, listed, force):
    """(state, detail, listing, message or None) of one engine now: `ps` each time; `inspect`
    only when its listing changed from `listed`, or when `force`d (a restart keeps the id and
    the state: the console asks when the watcher sees a server's pid change)."""
    if which(engine) is None:
        return "absent", None, None, None
    status, stdout, stderr = call([engine, "ps", "-a", "--no-trunc", "--format", LISTING])
    state, detail = state_of(status, stderr)
    if state != "ok":
        return state, detail, None, None
    if stdout == listed and not force:
        return "ok", None, stdout, None
    ids = [line.split()[0] for line in stdout.splitlines() if line.strip()]
    inspect, images = [], []
    if ids:
        status, out_text, stderr = call([engine, "inspect"] + ids)
        inspect = loads(out_text) if status == 0 else []  # one gone meanwhile: next round
        image_ids = sorted(
            {item.get("Image") for item in inspect if isinstance(item, dict)} - {None}
        )
        if image_ids:
            status, out_text, stderr = call([engine, "image", "inspect"] + image_ids)
            images = loads(out_text) if status == 0 else []
    message = {"t": "containers", "engine": engine, "inspect": inspect, "images": images}
    return "ok", None, stdout, message


def loads(text):
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


class LogFollower(threading.Thread):
    """`ENGINE logs --follow --timestamps --since SINCE ID`, its lines sent in batches."""

    def __init__(self, container, engine, since):
        threading.Thread.__init__(self, daemon=True)
        self.container = container
        self.since = since
        argv = [engine, "logs", "--follow", "--timestamps"]
        argv += ["--since", since] if since else []
        self.process = subprocess.Popen(
            argv + [container],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    def run(self):
        stream, pending = self.process.stdout, b""
        while True:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            while select.select([stream], [], [], BATCH_WAIT_S)[0]:
                more = os.read(stream.fileno(), 65536)
                if not more:
                    break
                pending += more
            lines = pending.split(b"\n")
            pending = lines.pop()
            if lines:
                text = [line.decode("utf-8", "replace") for line in lines]
                out({"t": "clog", "id": self.container, "lines": text})
        out({"t": "clog_end", "id": self.container, "status": self.process.wait()})

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()


def follow(line, followers):
    """One stdin command: follow the logs it names (each once at a time); whether it asks for a
    full survey now."""
    try:
        command = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        return False
    if not isinstance(command, dict):
        return False
    wanted = command.get("follow")
    for container, spec in (wanted if isinstance(wanted, dict) else {}).items():
        if not isinstance(spec, dict) or spec.get("engine") not in ENGINES:
            continue
        old = followers.get(container)
        if old is not None and old.is_alive():
            if old.since == spec.get("since"):
                continue
            old.stop()  # a restart: the new start's log, from its own beginning
        followers[container] = LogFollower(container, spec["engine"], spec.get("since"))
        followers[container].start()
    return bool(command.get("survey"))


def main():
    args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    interval = float(args.get("interval", 5.0))
    states, sent, followers, quiet_until, listed = {}, {}, {}, {}, {}
    next_full, wanted = 0.0, [False]  # wanted[0]: the console asked for a full survey
    next_survey, pending = 0.0, b""
    try:
        while True:
            now = time.time()
            if now >= next_survey:
                full = now >= next_full or wanted[0]
                if full:
                    next_full, wanted[0] = now + FULL_S, False
                for engine in ENGINES:
                    if quiet_until.get(engine, 0.0) > now:
                        continue
                    state, detail, listed[engine], message = survey(
                        engine, listed.get(engine), full
                    )
                    if state in ("absent", "down"):
                        quiet_until[engine] = now + QUIET_S
                    if message is not None and sent.get(engine) != message:
                        sent[engine] = message
                        out(message)  # before its state: once both engines are said, all is
                    if states.get(engine) != (state, detail):
                        states[engine] = (state, detail)
                        out({"t": "engine", "engine": engine, "state": state, "detail": detail})
                out({"t": "hb", "time": time.time()})
                next_survey = time.time() + interval
            ready = select.select([0], [], [], max(0.0, next_survey - time.time()))[0]
            if not ready:
                continue
            chunk = os.read(0, 65536)  # not sys.stdin: its buffer hides lines from select
            if not chunk:
                return 0  # the console went away
            commands = (pending + chunk).split(b"\n")
            pending = commands.pop()
            for line in commands:
                if follow(line, followers):
                    wanted[0], next_survey = True, 0.0
    finally:
        for follower in followers.values():
            follower.stop()


if __name__ == "__main__":
    sys.exit(main())

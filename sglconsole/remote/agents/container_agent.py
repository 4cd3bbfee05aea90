"""The read-only container watcher sglconsole runs on each host, over one SSH channel.

Sent as ``python3 -c <this file's source> <json args>``: standard library only (3.6+), nothing
changed on the host. With the host's own CLIs (``docker``, ``podman`` as its PATH finds them;
rootful or rootless is the login's) it prints JSON lines:

  {"t": "engine", "engine", "state", "detail"}   ok / absent / down / denied / error, on change
  {"t": "containers", "engine", "inspect", "images"}   `ps -a` + `inspect` of every container
                                                  and `image inspect` of their images, on change
  {"t": "clog", "id", "lines"}     new lines of a followed container (`logs --timestamps`)
  {"t": "clog_end", "id", "status"}    its `logs --follow` ended (the container stopped)
  {"t": "events", "engine", "state", "detail"}   stream: its event stream runs; poll: it could
                                                  not run or ended (detail), `ps` each interval
  {"t": "hb", "time", "calls"}     a heartbeat every interval; calls: the CLI processes it has
                                   started so far, by subcommand (`ps`: 3)

Each usable engine's own event stream (`events --filter type=container`, one long-lived process,
asleep until something happens) says when to look: an event (create, start, die, rename, ...)
brings `ps` + `inspect` (events close together: one look). `inspect` still runs at least every
FULL_S and on {"survey": true}. Where the stream cannot run or ends (an old engine, no events
backend, its daemon restarted) the engine is polled with `ps` each interval, said once, and the
stream is tried again every RETRY_S.

Its argument (JSON): {"interval": S (5), "quiet": S (QUIET_S), "retry": S (RETRY_S), "events":
false (poll only)}.

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
import tempfile
import threading
import time

ENGINES = ("docker", "podman")  # remote.monitor waits for a word on each (core.containers)
LISTING = "{{.ID}} {{.State}}"  # a Go template both engines' `ps --format` take
FULL_S = 60.0  # `inspect` at least this often, whatever `ps` says
QUIET_S = 60.0  # an engine absent or down is asked again this often, not at every interval
CALL_TIMEOUT_S = 30  # a daemon that does not answer `ps` in this long is reported, not waited on
BATCH_WAIT_S = 0.05  # lines that arrive together go out together
EVENTS_WAIT_S = 0.2  # events within this long of the first bring one look (`run`: create, start)
RETRY_S = 60.0  # an event stream that could not run or ended is tried again this often
STEADY_S = 2.0  # a stream still running this long after its start is said to run
EVENTS = {  # each engine's stream of container events, one JSON object a line
    "docker": ["events", "--format", "{{json .}}", "--filter", "type=container"],
    "podman": ["events", "--format", "json", "--filter", "type=container"],
}
# events that change nothing `inspect` shows: a console's own `exec` (the version question), a
# health check's, attach/resize/top/cp; seen, they would bring a look per health check
IDLE_EVENTS = ("exec", "health_status", "attach", "detach", "resize", "top", "archive-path",
               "extract-to-dir", "export", "copy")  # fmt: skip

LOCK = threading.Lock()
CALLS = {}  # subcommand -> CLI processes started: the heartbeat says it (no `ps` while streaming)


def counted(argv):
    with LOCK:
        CALLS[argv[1]] = CALLS.get(argv[1], 0) + 1
    return argv


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
            counted(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
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
            counted(argv + [container]),
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


class EventStream(threading.Thread):
    """`ENGINE events ...` of one engine: each event that may change what `inspect` shows marks
    the engine to be looked at and wakes the main loop (a byte on `wake`)."""

    def __init__(self, engine, wake, since):
        threading.Thread.__init__(self, daemon=True)
        self.engine, self.wake = engine, wake
        self.started = time.time()
        self.changed_at = None  # when the first event not yet looked at came
        self.ended = None  # why it ended: the last line it said, or its status
        # from `since` (before the look that follows its start): no event between is lost
        argv = [engine] + EVENTS[engine] + ["--since", since]
        self.errors = tempfile.TemporaryFile()  # not a pipe: warnings while it runs never block it
        self.process = subprocess.Popen(
            counted(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.errors
        )

    def run(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            action = str(event.get("Action") or event.get("Status") or "").split(":")[0]
            if action.startswith("exec") or action in IDLE_EVENTS:
                continue
            with LOCK:
                if self.changed_at is None:
                    self.changed_at = time.time()
            os.write(self.wake, b"e")
        status = self.process.wait()
        self.errors.seek(0)
        stderr = self.errors.read().decode("utf-8", "replace").strip().splitlines()
        self.errors.close()
        self.ended = (stderr or ["`events` exited %s" % status])[-1][-300:]
        os.write(self.wake, b"x")

    def take(self, now):
        """Whether an event waits for a look that is due now (and, if so, it is taken)."""
        with LOCK:
            due = self.changed_at is not None and now >= self.changed_at + EVENTS_WAIT_S
            if due:
                self.changed_at = None
        return due

    def due_at(self):
        with LOCK:
            return None if self.changed_at is None else self.changed_at + EVENTS_WAIT_S

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()


class Engine:
    """One engine as the agent watches it: its state as last said, its listing, its stream."""

    def __init__(self, name, use_events):
        self.name = name
        self.state = None  # (state, detail) as last said
        self.listed, self.sent = None, None
        self.quiet_until = 0.0
        self.stream = None
        self.retry_at = 0.0 if use_events else float("inf")
        self.said = None  # ("stream" | "poll", detail) as last said
        self.next_poll = 0.0

    def streaming(self):
        return self.stream is not None and self.stream.ended is None

    def say(self, state, detail):
        if self.said != (state, detail):
            self.said = (state, detail)
            out({"t": "events", "engine": self.name, "state": state, "detail": detail})

    def look(self, force):
        state, detail, self.listed, message = survey(self.name, self.listed, force)
        if state in ("absent", "down"):
            self.quiet_until = time.time() + QUIET[0]
        if message is not None and self.sent != message:
            self.sent = message
            out(message)  # before its state: once both engines are said, all is
        if self.state != (state, detail):
            self.state = (state, detail)
            out({"t": "engine", "engine": self.name, "state": state, "detail": detail})
        return state

    def tick(self, now, full, wake):
        """Whatever is due for this engine now."""
        if self.quiet_until > now:
            return
        stream = self.stream
        if stream is not None and stream.ended is not None:  # it ended: poll until it runs again
            self.stream, self.retry_at = None, now + RETRY[0]
            self.say("poll", stream.ended)
            self.next_poll = 0.0
        if self.streaming():
            if now - stream.started >= STEADY_S:
                self.say("stream", None)
            if stream.take(now) or full:
                self.look(True)
            return
        if now >= self.next_poll or full:
            state = self.look(full)
            self.next_poll = now + INTERVAL[0]
            if state == "ok" and now >= self.retry_at:
                since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 1))
                # from a second before this look: what changes after it is an event to it
                try:
                    self.stream = EventStream(self.name, wake, since)
                except OSError as exc:  # gone since the look: polled, and tried again later
                    self.retry_at = now + RETRY[0]
                    self.say("poll", str(exc)[-300:])
                    return
                self.stream.start()

    def due(self):
        if self.streaming():
            return self.stream.due_at() or float("inf")
        return max(self.next_poll, self.quiet_until)

    def stop(self):
        if self.stream is not None:
            self.stream.stop()


INTERVAL = [5.0]  # seconds between heartbeats, and between `ps` of an engine without a stream
QUIET = [QUIET_S]  # the args' "quiet", else QUIET_S
RETRY = [RETRY_S]  # the args' "retry", else RETRY_S


def main():
    args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    INTERVAL[0] = float(args.get("interval", 5.0))
    QUIET[0] = float(args.get("quiet", QUIET_S))
    RETRY[0] = float(args.get("retry", RETRY_S))
    engines = [Engine(name, args.get("events", True) is not False) for name in ENGINES]
    followers, pending = {}, b""
    wake_read, wake = os.pipe()
    next_full, next_hb, wanted = 0.0, 0.0, False  # wanted: the console asked for a full survey
    try:
        while True:
            now = time.time()
            full = now >= next_full or wanted
            if full:
                next_full, wanted = now + FULL_S, False
            for engine in engines:
                engine.tick(now, full, wake)
            if now >= next_hb:
                with LOCK:
                    calls = dict(CALLS)
                out({"t": "hb", "time": time.time(), "calls": calls})
                next_hb = time.time() + INTERVAL[0]
            until = min([next_hb, next_full] + [engine.due() for engine in engines])
            ready = select.select([0, wake_read], [], [], max(0.0, until - time.time()))[0]
            if wake_read in ready:
                os.read(wake_read, 4096)
            if 0 not in ready:
                continue
            chunk = os.read(0, 65536)  # not sys.stdin: its buffer hides lines from select
            if not chunk:
                return 0  # the console went away
            commands = (pending + chunk).split(b"\n")
            pending = commands.pop()
            for line in commands:
                if follow(line, followers):
                    wanted = True
    finally:
        for follower in followers.values():
            follower.stop()
        for engine in engines:
            engine.stop()


if __name__ == "__main__":
    sys.exit(main())

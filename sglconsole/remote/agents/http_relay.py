"""The console's HTTP polls of the servers on one host, asked on the host itself: one long-lived
program per host, requests in on stdin and answers out on stdout, a JSON line each
(sglconsole/remote/relay.py is the console's end). Through an SSH forward every poll opened an SSH
channel and crossed a local socket and an HTTP client stack in the console: most of an idle
console's cost of a request. Standard library only, Python 3.6+.

A request, always a GET (the relay only reads): {"i": ID, "a": ADDRESS, "p": PORT, "u": PATH,
"t": TIMEOUT_S}.
An answer: {"i": ID, "s": STATUS, "h": [[NAME, VALUE], ...], "b": BODY_BASE64}, or
{"i": ID, "e": KIND, "w": WORDS} where KIND is "timeout", "connect" or "closed" (the console reads
them as its HTTP client's errors). Each request runs in a thread of its own: a wedged server's
silence holds its own request, never another server's. Idle connections are kept KEEP_S (the
console's own keep-alive, passed in) and a GET whose kept connection was closed before its answer
is asked once more on a new one: SGLang's uvicorn closes a connection idle 5 s.
"""

import base64
import http.client
import json
import os
import socket
import sys
import threading
import time

ARGS = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
KEEP_S = float(ARGS.get("keep_alive_s", 4.0))
HEADERS = {"Accept": "*/*", "Accept-Encoding": "gzip", "User-Agent": "sglconsole-relay"}
CLOSED = (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError,
          BrokenPipeError)  # fmt: skip
"""What a kept connection the server closed under the request raises (asked once more)."""

written = threading.Lock()
kept = {}  # (address, port) -> [(connection, idle since)]
pool = threading.Lock()


def out(obj):
    line = json.dumps(obj, separators=(",", ":")) + "\n"
    with written:
        sys.stdout.write(line)
        sys.stdout.flush()


def take(key, timeout):
    """A kept connection to KEY idle less than KEEP_S (True), else a new one (False)."""
    now = time.monotonic()
    with pool:
        idle = kept.get(key, [])
        while idle:
            connection, since = idle.pop()
            if now - since < KEEP_S:
                connection.sock.settimeout(timeout)
                return connection, True
            connection.close()
    return http.client.HTTPConnection(key[0], key[1], timeout=timeout), False


def give_back(key, connection):
    with pool:
        kept.setdefault(key, []).append((connection, time.monotonic()))


def ask(request):
    key = (request["a"], request["p"])
    for attempt in (1, 2):
        connection, reused = take(key, request["t"])
        try:
            connection.request("GET", request["u"], headers=HEADERS)
            response = connection.getresponse()
            body = response.read()
        except socket.timeout as exc:
            connection.close()
            return out({"i": request["i"], "e": "timeout", "w": str(exc) or "timed out"})
        except CLOSED as exc:
            connection.close()
            if reused and attempt == 1:
                continue
            return out({"i": request["i"], "e": "closed", "w": str(exc) or type(exc).__name__})
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            return out({"i": request["i"], "e": "connect", "w": str(exc) or type(exc).__name__})
        if response.will_close:
            connection.close()
        else:
            give_back(key, connection)
        return out(
            {
                "i": request["i"],
                "s": response.status,
                "h": response.getheaders(),
                "b": base64.b64encode(body).decode("ascii"),
            }
        )


def sweep():
    """Connections idle past KEEP_S are closed (the server would, and a quiet host keeps none)."""
    while True:
        time.sleep(KEEP_S)
        now = time.monotonic()
        with pool:
            for key, idle in list(kept.items()):
                for connection, since in idle:
                    if now - since >= KEEP_S:
                        connection.close()
                kept[key] = [(conn, since) for conn, since in idle if now - since < KEEP_S]


def main():
    threading.Thread(target=sweep, daemon=True).start()
    out({"t": "relay", "pid": os.getpid()})
    for line in sys.stdin:  # EOF: the console is gone, and so are we
        try:
            request = json.loads(line)
            request["i"], request["a"], request["p"], request["u"]  # noqa: B018
            request["t"] = float(request.get("t", 5.0))
        except (ValueError, KeyError, TypeError):
            continue  # not ours: nobody waits for it
        threading.Thread(target=ask, args=(request,), daemon=True).start()


if __name__ == "__main__":
    main()

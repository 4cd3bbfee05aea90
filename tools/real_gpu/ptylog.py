"""ptylog.py COLS ROWS OUTFILE T0 -- ARGV: run ARGV in a pseudo-terminal (so rich's Live redraws as on a screen);
every line it draws goes to OUTFILE with escape codes removed, prefixed with the time and seconds since T0
(epoch); the raw bytes go to OUTFILE.raw. SIGINT/SIGTERM to this process are passed to the child as SIGINT."""
import os, pty, re, signal, struct, sys, time, fcntl, termios, select
cols, rows, outf, t0 = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
argv = sys.argv[sys.argv.index("--") + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.environ.update({"TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)})
    os.execvp(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
def fwd(sig, frm):
    try: os.kill(pid, signal.SIGINT)
    except OSError: pass
signal.signal(signal.SIGINT, fwd); signal.signal(signal.SIGTERM, fwd)
ansi = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]|\x1b[=>78]")
out = open(outf, "w", buffering=1); raw = open(outf + ".raw", "wb"); buf = b""
def emit(line):
    t = time.time()
    txt = ansi.sub(b"", line).replace(b"\r", b"").decode("utf-8", "replace")
    if txt.strip():
        out.write("%s.%03d +%.1fs %s\n" % (time.strftime("%H:%M:%S", time.localtime(t)), int(t * 1000) % 1000, t - t0, txt))
while True:
    try:
        r, _, _ = select.select([fd], [], [], 1.0)
        if not r: continue
        data = os.read(fd, 65536)
    except InterruptedError:
        continue
    except OSError:
        break
    if not data: break
    raw.write(data); buf += data
    *lines, buf = re.split(rb"\n|\x1b\[\d*A", buf)
    for l in lines: emit(l)
if buf: emit(buf)
_, st = os.waitpid(pid, 0)
out.write("exit status %s\n" % (os.waitstatus_to_exitcode(st),))

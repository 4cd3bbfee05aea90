"""tsline.py: copy stdin to stdout, each line prefixed with the wall-clock time and seconds since T0 (argv[1], epoch)."""
import sys, time
t0 = float(sys.argv[1]) if len(sys.argv) > 1 else time.time()
for line in sys.stdin:
    t = time.time()
    sys.stdout.write("%s.%03d +%.1fs %s" % (time.strftime("%H:%M:%S", time.localtime(t)), int(t * 1000) % 1000, t - t0, line))
    sys.stdout.flush()

"""The host's memory and its SGLang processes' RSS, for the watcher (watcher_agent.py).

Not run alone: ``source("watcher_agent")`` inlines this file where the watcher imports it. Reads
/proc/meminfo and /proc/PID/statm only (a few hundred bytes each, no process started): the cost
of one report is well under a millisecond. Standard library only, Python 3.6+.
"""

import os
import time

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def meminfo():
    """{"MemTotal": kB, "MemAvailable": kB, ...}; {} when /proc/meminfo cannot be read."""
    fields = {}
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    fields[name] = int(parts[0])
    except (OSError, IOError):
        pass
    return fields


def rss_kb(pid):
    """Resident set of one process in kB (statm's second field), None when it is gone."""
    try:
        with open("/proc/%s/statm" % pid) as handle:
            return int(handle.read().split()[1]) * PAGE_KB
    except (OSError, IOError, ValueError, IndexError):
        return None


def memory_report(processes):
    """{"t": "mem", ...}: MemTotal and MemAvailable (None where the kernel did not say) and the
    RSS of each process the watcher keeps (servers, their ranks and children)."""
    fields = meminfo()
    rss = {}
    for process in processes:
        value = rss_kb(process["pid"])
        if value is not None:
            rss[str(process["pid"])] = value
    return {
        "t": "mem",
        "time": time.time(),
        "total_kb": fields.get("MemTotal"),
        "avail_kb": fields.get("MemAvailable"),
        "rss": rss,
    }

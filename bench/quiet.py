"""Wait until the machine is quiet before a round: CPU busy under a threshold for a while, or give up.

A benchmark round measured while something else is compiling or testing says little. This reads
/proc/stat (Linux) twice a second and waits until the whole CPU has been under `max_busy` for `hold_s`
seconds in a row, or `timeout_s` has passed; what it saw is returned, so the results say whether each
round started quiet. On a machine without /proc/stat it returns at once and says so.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")


def cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, or None where /proc/stat does not exist."""
    try:
        fields = PROC_STAT.read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    values = [int(v) for v in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # guest time is already inside user time
    return total - idle, total


def wait_quiet(
    max_busy: float = 0.15, hold_s: float = 5.0, timeout_s: float = 60.0, interval_s: float = 0.5
) -> dict:
    """Waits for `hold_s` seconds of CPU busy <= `max_busy` (0-1). Returns what happened."""
    began = time.monotonic()
    last = cpu_times()
    if last is None:
        return {"checked": False, "why": "no /proc/stat on this system", "waited_s": 0.0}
    quiet_since = None
    while True:
        time.sleep(interval_s)
        now_times = cpu_times()
        busy = (now_times[0] - last[0]) / max(1, now_times[1] - last[1])
        last = now_times
        now = time.monotonic()
        if busy <= max_busy:
            quiet_since = quiet_since or now - interval_s
            if now - quiet_since >= hold_s:
                return _report(True, began, busy, max_busy, hold_s, timeout_s)
        else:
            quiet_since = None
        if now - began >= timeout_s:
            return _report(False, began, busy, max_busy, hold_s, timeout_s)


def _report(quiet: bool, began: float, busy: float, max_busy: float, hold_s: float, timeout_s: float) -> dict:
    return {
        "checked": True,
        "quiet": quiet,  # False: gave up after timeout_s and ran anyway
        "waited_s": round(time.monotonic() - began, 2),
        "cpu_busy_last": round(busy, 3),
        "loadavg": list(os.getloadavg()),
        "rule": f"CPU busy <= {max_busy:.0%} for {hold_s:g} s, at most {timeout_s:g} s of waiting",
    }

"""How much slower than a quiet 2-core machine this one runs now: the tests' waits scale by it.

A wait returns as soon as its condition holds, so a long limit costs time only when a
test fails; the factor keeps limits tight enough to fail fast on a quiet machine and
loose enough on one whose cores other jobs share. ``FACTOR`` is measured once per test
process: the best of five runs of a fixed pure-Python loop against its time with a core
to itself, and the 1-minute load average per core; ``TEST_SLOW_FACTOR=x``
overrides it.
"""

from __future__ import annotations

import os
import time

# The probe's best time with a core to itself (run at real-time priority, `chrt -f`) on the
# 2-core Intel Xeon CI machine: 10.6 ms.
QUIET_PROBE_S = 0.011


def _probe_s() -> float:
    """Seconds of the fastest of five runs of a fixed loop (~11 ms on a quiet machine)."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for i in range(200_000):
            total += i & 7
        best = min(best, time.perf_counter() - start)
    return best


def measure() -> float:
    """The factor (>= 1, at most 8): the larger of the probe's slowdown and the load per core."""
    forced = os.environ.get("TEST_SLOW_FACTOR", "")
    try:
        return max(1.0, float(forced))
    except ValueError:
        pass
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    return min(8.0, max(1.0, _probe_s() / QUIET_PROBE_S, load))


FACTOR = measure()

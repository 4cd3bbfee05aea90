"""The trend of a memory series and when it runs out: "host out of memory in ~N min", said only
when the trend is steady (pure).

A least-squares line through the samples of the last WINDOW_S. Its slope is believed when the
series is long enough (MIN_SPAN_S, MIN_SAMPLES: a minute of a 10 s watcher report is 7), the
line explains the series (R² >= MIN_R2: a leak is a steady fall; an allocator's saw-tooth or a
load burst is not) and the fall is more than noise (MIN_FALL_KB_S, 1 MiB/min: the page cache
breathes by that much). Then the estimate is now + what is left / the fall, in whole minutes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

WINDOW_S = 1800.0  # half an hour: a leak of the kind #28902 saw (OOM kills a day apart) shows
MIN_SPAN_S = 45.0
MIN_SAMPLES = 5
MIN_R2 = 0.8
MIN_FALL_KB_S = 1024 / 60  # 1 MiB a minute


@dataclass(frozen=True, kw_only=True)
class Trend:
    slope_kb_s: float | None
    """kB per second (negative: falling); None with fewer than two samples apart in time."""
    steady: bool
    """The line explains the series (see the module's rules): only then is `eta_s` said."""
    eta_s: float | None
    """Seconds until the series reaches zero at this slope; None unless steady and falling."""
    span_s: float
    samples: int
    r_squared: float | None = None


NO_TREND = Trend(slope_kb_s=None, steady=False, eta_s=None, span_s=0.0, samples=0)


def trend(samples: Sequence[tuple[float, float]], now: float | None = None) -> Trend:
    """(time, kB) samples, oldest first. The longest window (WINDOW_S, then halves of it down to
    MIN_SPAN_S) whose line is steady and whose newer half falls (or rises) at the same pace, within
    AGREE: a step (a big allocation, a restart) followed by a leak is judged on the leak alone."""
    if not samples:
        return NO_TREND
    newest = samples[-1][0] if now is None else now
    window, best = WINDOW_S, None
    while window >= MIN_SPAN_S:
        points = [(when, value) for when, value in samples if newest - when <= window]
        found = _fit(points)
        best = best or found  # the longest window's line, when none is steady
        if found.steady:
            half = _fit([(when, value) for when, value in points if newest - when <= window / 2])
            if half.slope_kb_s is not None and _agree(found.slope_kb_s, half.slope_kb_s):
                return found
        window /= 2
    return replace(best, steady=False, eta_s=None)


AGREE = 0.5  # the newer half's slope within 50% of the whole window's


def _agree(whole: float | None, half: float) -> bool:
    return whole is not None and abs(half - whole) <= AGREE * abs(whole)


def _fit(points: list[tuple[float, float]]) -> Trend:
    """A least-squares line through the points, judged by the module's rules."""
    if len(points) < 2:
        return Trend(slope_kb_s=None, steady=False, eta_s=None, span_s=0.0, samples=len(points))
    times = [when for when, _ in points]
    values = [value for _, value in points]
    span = times[-1] - times[0]
    count = len(points)
    mean_t, mean_v = sum(times) / count, sum(values) / count
    var_t = sum((when - mean_t) ** 2 for when in times)
    if var_t <= 0:
        return Trend(slope_kb_s=None, steady=False, eta_s=None, span_s=span, samples=count)
    cov = sum((when - mean_t) * (value - mean_v) for when, value in points)
    slope = cov / var_t
    var_v = sum((value - mean_v) ** 2 for value in values)
    r_squared = 1.0 if var_v == 0 else (cov * cov) / (var_t * var_v)
    steady = span >= MIN_SPAN_S and count >= MIN_SAMPLES and r_squared >= MIN_R2
    eta = None
    if steady and slope < -MIN_FALL_KB_S:
        eta = max(0.0, values[-1] / -slope)
    return Trend(
        slope_kb_s=slope, steady=steady, eta_s=eta, span_s=span, samples=count, r_squared=r_squared
    )


def eta_words(eta_s: float | None) -> str | None:
    """'out of memory in ~12 min' / '~3 h' / 'now'; None when there is no estimate."""
    if eta_s is None:
        return None
    if eta_s < 60:
        return "out of memory in <1 min"
    minutes = round(eta_s / 60)
    if minutes < 120:
        return f"out of memory in ~{minutes} min"
    return f"out of memory in ~{minutes / 60:.0f} h"

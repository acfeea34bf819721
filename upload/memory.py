"""This process's resident memory, from ``/proc/self`` (Linux; None elsewhere).

The command line's worker reports what reading a checkpoint cost it: its resident set
before reading and its peak while reading (the kernel's high-water mark, reset first).
A checkpoint read by ``torch.load(mmap=True)`` adds only the pages of the tensors that
were touched, so the peak says whether the optimizer state was left unread.
"""

from __future__ import annotations

from pathlib import Path

from inference.memory import release_freed

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kb(field: str) -> int | None:
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def rss() -> int | None:
    """Resident set size now (bytes: ``VmRSS``), or None where unreadable."""
    kb = _status_kb("VmRSS")
    return None if kb is None else kb * 1024


def peak() -> int | None:
    """Peak resident set size since the process started or :func:`reset_peak` (bytes:
    ``VmHWM``), or None where unreadable."""
    kb = _status_kb("VmHWM")
    return None if kb is None else kb * 1024


def reset_peak() -> int | None:
    """Reset the peak to the resident set now (``echo 5 > /proc/self/clear_refs``, Linux
    4.0+) and return it (bytes); None where that cannot be done (the peak then counts
    from the process's start, an upper bound)."""
    try:
        CLEAR_REFS.write_text("5")
    except OSError:
        return None
    return rss()


def trim() -> bool:
    """Hand the heap's free pages back to the system (``inference.memory.release_freed``:
    glibc's ``malloc_trim(0)``; False where there is no glibc). After a large analysis the
    server's arrays are freed but glibc keeps their pages; this returns the resident set
    near where it was."""
    return release_freed()

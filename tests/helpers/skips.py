"""No silent skip: under ``--strict-skips`` (what ``make test``, and so ``.ci/run``,
passes) a test that skips, or is marked ``xfail``, fails the run unless its reason is
on :data:`ALLOWED`.

A skip that a file, a record or a machine's mood can trigger is a test that did not run
while the run says green (issue #43). The reasons below are the only ones that can hold
on a machine like CI's and still leave the run honest: each names a piece of hardware or
an operating system this project does not require. Every skip prints its reason
(``pytest -rs``) whether it is allowed or not.

Hooks, imported into ``tests/conftest.py``: :func:`pytest_addoption`,
:func:`pytest_runtest_makereport`.
"""

from __future__ import annotations

import pytest

# Prefixes of the reasons a skip may give under --strict-skips. Keep this list short and
# say why each is here.
ALLOWED = (
    # GPU-only checks (onnxruntime's CUDA provider): CI's machine has no GPU.
    "needs a CUDA GPU",
    # Scheduling measurements read Linux's /proc/<pid>/schedstat: other systems lack it.
    "needs Linux's /proc/<pid>/schedstat",
)


def allowed(reason: str) -> bool:
    """Whether a skip's ``reason`` (pytest's text, with or without its ``Skipped: ``
    prefix) is on :data:`ALLOWED`."""
    text = reason.removeprefix("Skipped: ").strip()
    return any(text.startswith(prefix) for prefix in ALLOWED)


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped (or xfail) report gives, as ``pytest -rs`` prints it."""
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}"
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: why")
        return str(longrepr[2])
    return str(longrepr)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--strict-skips",
        action="store_true",
        help="fail every skip or xfail whose reason is not in tests/helpers/skips.py ALLOWED",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Turn a disallowed skip into a failure that names the reason and the list."""
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not item.config.getoption("--strict-skips"):
        return
    reason = skip_reason(report)
    if hasattr(report, "wasxfail") or not allowed(reason):
        if hasattr(report, "wasxfail"):
            del report.wasxfail  # else the JUnit report writes it as skipped
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} skipped ({reason}): under --strict-skips a test may skip only "
            f"for a reason in tests/helpers/skips.py ALLOWED {list(ALLOWED)}; make it run, "
            f"or fail, here"
        )

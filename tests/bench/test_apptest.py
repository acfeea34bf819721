"""AppTest plumbing (bench/apptest.py): AppTests share one scan for Streamlit components."""

from __future__ import annotations

import importlib.metadata

from streamlit.testing.v1 import AppTest

from bench.apptest import scan_components_once

SCRIPT = "import streamlit as st\nst.write('hello')\n"


def test_apptests_share_one_scan_of_the_installed_packages(monkeypatch):
    """Streamlit 1.67 scans every installed distribution on each AppTest's first run
    (0.34 s each); after ``scan_components_once`` (tests/conftest.py calls it) a process
    scans at most once, however many AppTests it runs. Fails when Streamlit finds its
    scanner some other way than the module attribute the helper replaces."""
    scan_components_once()
    scan_components_once()  # idempotent: one wrapper, not a wrapper of a wrapper
    calls = []
    real = importlib.metadata.distributions

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(importlib.metadata, "distributions", counted)
    for _ in range(3):
        at = AppTest.from_string(SCRIPT).run()
        assert not at.exception and at.markdown[0].value == "hello"
    assert len(calls) <= 1, f"{len(calls)} scans for 3 AppTests"

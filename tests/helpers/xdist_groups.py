"""``--dist loadgroup`` that groups again on pytest 9.2: a plugin of ``tests/conftest.py``.

pytest-xdist 3.8 tells its scheduler a test's ``xdist_group`` by appending ``@<group>``
to the test's node id in the worker (``item._nodeid``). pytest 9.2 keeps the id in
``item._id`` (a structured ``NodeId``), so that assignment changes nothing and every
grouped test was handed out on its own (pytest-dev/pytest-xdist#1386, open): the
browser tests ran on both workers against two servers and two Chromiums at once, and
the drift tests evaluated the shipped models once per worker. This hook appends the
suffix the way pytest 9.2 reads it, after every other hook added its marks (the
browser tests' group comes from ``tests/e2e/conftest.py``), and only where xdist's
own suffix is missing, so it does nothing on a pytest or xdist that groups by itself.

A test that uses a module-scoped fixture (an export, a conversion, an app run, shared by
its module's tests) joins its module's group too (:func:`module_group`): handed out one
by one, a module's tests were split between the workers, and each worker built the
fixture again (a tiny checkpoint's export in tests/ui/test_upload.py: 11 s on each).
``tests/test_xdist_groups.py`` runs a grouped file on two workers and fails if the
grouping is lost again.
"""

from __future__ import annotations

import pytest


def group_of(item: pytest.Item) -> str | None:
    """The group xdist gives ``item``: its ``xdist_group`` names, sorted and joined by
    ``_`` (xdist's own rule), or None without the mark."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "_".join(sorted(names)) if names else None


def module_group(item: pytest.Item) -> str | None:
    """``module-<its file>`` for a test that uses a module-scoped fixture, else None (a test
    with an ``xdist_group`` of its own keeps that one)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in item.fixturenames:
        if any(d.scope == "module" for d in info.name2fixturedefs.get(name, ())):
            return f"module-{item.nodeid.split('::')[0]}"
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # a pytest run inside a test inherits PYTEST_XDIST_WORKER without being a worker
    if not hasattr(config, "workerinput") or not config.getoption("loadgroup", default=False):
        return
    from _pytest.nodeid import NodeId  # pytest 9.2's structured node id

    for item in items:
        group = group_of(item) or module_group(item)
        if group is None or item.nodeid.endswith(f"@{group}"):
            continue
        item._id = NodeId.parse(f"{item.nodeid}@{group}")

"""``bench.cpu_share``: the CPU a process's work could have had, alone on the machine
(the idle share) or beside an idle sibling group (what that group used was free too)."""

from __future__ import annotations

from collections import namedtuple

import pytest

from bench import cpu_share

Times = namedtuple("Times", "user nice system idle iowait")


def test_the_idle_share_without_yielding_groups():
    before = cpu_share.Reading(Times(10, 0, 5, 100, 1), 0)
    after = cpu_share.Reading(Times(16, 0, 7, 101, 2), 0)  # 8 busy, 2 idle of 10
    assert cpu_share.free_share(before, after) == pytest.approx(0.2)


def test_what_an_idle_sibling_group_used_was_free_too():
    before = cpu_share.Reading(Times(10, 0, 5, 100, 1), 0)
    after = cpu_share.Reading(Times(16, 0, 7, 101, 2), int(5e9))  # it used 5 of the 8 busy
    assert cpu_share.free_share(before, after) == pytest.approx(0.7)


def test_idle_siblings_are_read_from_the_group_tree(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_share, "CPU", tmp_path / "cpu")
    monkeypatch.setattr(cpu_share, "CPUACCT", tmp_path / "cpuacct")
    for name, idle, usage in (("ahead", "0", 7), ("behind", "1", 5), ("other", "1", 11)):
        (tmp_path / "cpu" / "t" / name).mkdir(parents=True)
        (tmp_path / "cpu" / "t" / name / "cpu.idle").write_text(idle)
        (tmp_path / "cpuacct" / "t" / name).mkdir(parents=True)
        (tmp_path / "cpuacct" / "t" / name / "cpuacct.usage").write_text(str(usage))
    assert cpu_share.yielding_ns("t/ahead") == 5 + 11  # not its own 7
    assert cpu_share.yielding_ns("t/behind") == 11  # "ahead" is not idle
    assert cpu_share.group_path("4:memory:/x\n2:cpuacct:/t/ahead\n1:cpu:/t/ahead\n") == "t/ahead"
    assert cpu_share.group_path("2:cpuacct:/\n1:cpu:/\n") is None  # the root group
    assert cpu_share.group_path("0::/user.slice\n") is None  # cgroup v2 alone
    assert cpu_share.yielding_ns("") == 0 and cpu_share.yielding_ns("top") == 0
    assert cpu_share.read().machine.idle >= 0

"""``bench.cpu_share``: the CPU a process's work could have had, alone on the machine
(the idle share) or in a CPU group ahead of the rest (all but the group's own use)."""

from __future__ import annotations

from collections import namedtuple

import pytest

from bench import cpu_share

Times = namedtuple("Times", "user nice system idle iowait")


def test_the_idle_share_in_the_root_group():
    before = cpu_share.Reading(Times(10, 0, 5, 100, 1), None)
    after = cpu_share.Reading(Times(16, 0, 7, 101, 2), None)  # 8 busy, 2 idle of 10
    assert cpu_share.free_share(before, after) == pytest.approx(0.2)


def test_in_a_group_what_others_used_was_free_too():
    before = cpu_share.Reading(Times(10, 0, 5, 100, 1), 0)
    after = cpu_share.Reading(Times(16, 0, 7, 101, 2), int(3e9))  # the group used 3 of 10
    assert cpu_share.free_share(before, after) == pytest.approx(0.7)


def test_the_group_is_read_from_proc_self_cgroup(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_share, "CPUACCT", tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "cpuacct.usage").write_text("5")
    v1 = "4:memory:/x\n2:cpuacct:/mine\n1:cpu:/mine\n0::/\n"
    assert cpu_share.group_folder(v1) == tmp_path / "mine"
    assert cpu_share.group_folder("2:cpuacct:/\n1:cpu:/\n") is None  # the root group
    assert cpu_share.group_folder("2:cpuacct:/gone\n") is None
    assert cpu_share.group_folder("0::/user.slice\n") is None  # cgroup v2 alone
    assert cpu_share.read().machine.idle >= 0

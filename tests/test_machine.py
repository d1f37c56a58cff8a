"""The machine probes: available memory (with a cgroup limit) and byte counts for people."""
import pytest

from skylite import _machine


@pytest.mark.parametrize("size, text", [(0, "0 B"), (512, "512 B"), (1536, "1.5 KiB"),
                                        (3 * 2**30, "3.0 GiB"), (5 * 2**40, "5.0 TiB")])
def test_format_bytes(size, text):
    assert _machine.format_bytes(size) == text


def _cgroup(tmp_path, monkeypatch, limit, usage):
    limit_file, usage_file = tmp_path / "memory.max", tmp_path / "memory.current"
    limit_file.write_text(limit + "\n")
    usage_file.write_text(f"{usage}\n")
    monkeypatch.setattr(_machine, "_CGROUP_FILES", ((str(limit_file), str(usage_file)),))


def test_a_cgroup_limit_caps_the_available_memory(tmp_path, monkeypatch):
    _cgroup(tmp_path, monkeypatch, str(3 * 2**20), 2**20)
    assert _machine._cgroup_room() == 2 * 2**20
    assert _machine.available_memory_bytes() == 2 * 2**20
    _cgroup(tmp_path, monkeypatch, str(2**20), 5 * 2**20)        # over the limit: no room
    assert _machine.available_memory_bytes() == 0


@pytest.mark.parametrize("limit", ["max", str(2**63 - 4096)])
def test_no_cgroup_limit_leaves_the_machine_s_memory(tmp_path, monkeypatch, limit):
    _cgroup(tmp_path, monkeypatch, limit, 2**20)
    assert _machine._cgroup_room() is None
    assert _machine.available_memory_bytes() > 0
    monkeypatch.setattr(_machine, "_CGROUP_FILES", ((str(tmp_path / "none"),) * 2,))
    assert _machine._cgroup_room() is None

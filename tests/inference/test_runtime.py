"""Execution providers: CUDA is asked for only when listed; what runs is what is reported."""

from __future__ import annotations

import onnxruntime as ort

from inference.runtime import load_shipped
from inference.sessions import requested_providers


def test_requested_providers_follow_the_build():
    wanted = requested_providers()
    assert wanted[-1] == "CPUExecutionProvider"
    assert ("CUDAExecutionProvider" in wanted) == (
        "CUDAExecutionProvider" in ort.get_available_providers()
    )


def test_active_provider_is_read_from_the_session(exported_dir):
    model = load_shipped(exported_dir, "softmax")
    active = model.fast_session.get_providers()
    assert model.provider == active[0]
    assert set(active) <= set(requested_providers())


def test_sessions_do_not_spin_between_runs(exported_dir):
    """Idle intra-op threads spinning would take the CPU other sessions' reruns need."""
    model = load_shipped(exported_dir, "linear")
    for session in (model.inspect_session, model.fast_session, model.step_session):
        options = session.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"

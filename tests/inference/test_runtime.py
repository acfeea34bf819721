"""Execution providers: CUDA is asked for only when listed; what runs is what is reported."""

from __future__ import annotations

import onnxruntime as ort

from inference.runtime import load_shipped, requested_providers


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

"""onnxruntime vs PyTorch eager on the same weights (fast-graph scaling with sequence length
is ``inference.measure.scaling``)."""

from __future__ import annotations

import copy

import numpy as np

from inference.measure import summarize, time_ms
from models import contract

SPEEDUP_TARGET = 1.5


def _on_cuda(session) -> bool:
    return session.get_providers()[0] == "CUDAExecutionProvider"


def _engines(twin, ids: np.ndarray):
    """``(run_ort, run_torch, label)`` for the fast graph and its PyTorch twin on ids (1, T).

    On CPU both return the logits (1, T, V) as arrays. With onnxruntime on CUDA the
    logits stay on the GPU (I/O binding) and PyTorch runs on CUDA too when it can
    (synchronized, logits left on the GPU); otherwise PyTorch runs on the CPU and the
    label says so. Each call uploads the (1, T) token ids, as the app would.
    """
    import torch  # only here: the app's lesson page imports this module without torch

    if not _on_cuda(twin.fast):

        def run_ort():
            return twin.fast.run(["logits"], {contract.INPUT_NAME: ids})[0]  # (1, T, V)

        def run_torch():
            with torch.inference_mode():
                return twin.net(torch.from_numpy(ids)).numpy()  # (1, T, V)

        return run_ort, run_torch, "onnxruntime CPU vs PyTorch CPU"
    binding = twin.fast.io_binding()

    def run_ort():
        binding.bind_cpu_input(contract.INPUT_NAME, ids)
        binding.bind_output("logits", "cuda", 0)
        twin.fast.run_with_iobinding(binding)  # waits for the GPU; logits stay there
        return binding

    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = copy.deepcopy(twin.net).to(device)

    def run_torch():
        with torch.inference_mode():
            out = net(torch.from_numpy(ids).to(device))  # (1, T, V) on the device
        if device == "cuda":
            torch.cuda.synchronize()
        return out

    label = "onnxruntime CUDA vs PyTorch " + ("CUDA" if device == "cuda" else "CPU")
    return run_ort, run_torch, label


def inference(twins: dict, T: int, repeats: int) -> dict:
    """onnxruntime vs PyTorch eager on the same weights and input (1, T), side by side.

    Calls alternate between the two engines so background load hits both alike.

    Returns:
        ``{kind: {"onnxruntime", "torch_eager": {"median_ms", ...}, "speedup",
        "max_abs_diff", "weights", "comparison"}}``, ``T``, ``met``.
    """
    import torch

    out: dict = {"T": T, "target_speedup": SPEEDUP_TARGET}
    met = True
    for kind, twin in twins.items():
        ids = (np.arange(T, dtype=np.int64)[None, :] * 7) % twin.net.cfg.vocab_size  # (1, T)
        run_ort, run_torch, label = _engines(twin, ids)
        got = run_ort()
        got = got.copy_outputs_to_cpu()[0] if hasattr(got, "copy_outputs_to_cpu") else got
        ref = run_torch()
        ref = ref.cpu().numpy() if isinstance(ref, torch.Tensor) else ref
        diff = float(np.abs(got - ref).max())
        ort_ms, torch_ms = [], []
        for _ in range(repeats):
            ort_ms += time_ms(run_ort, 1, warmup=0)
            torch_ms += time_ms(run_torch, 1, warmup=0)
        o, t = summarize(ort_ms), summarize(torch_ms)
        speedup = t["median_ms"] / o["median_ms"]
        if kind != "delta":  # its graphs scan the tokens: reported (bench/sections/speed.py)
            met &= speedup >= SPEEDUP_TARGET
        out[kind] = {
            "onnxruntime": o,
            "torch_eager": t,
            "speedup": speedup,
            "max_abs_diff": diff,
            "weights": twin.source,
            "comparison": label,
        }
    out["met"] = bool(met)
    return out

"""CLI conversion of a nanoGPT checkpoint with its optimizer state (issue #12, item 1).

The checkpoint is nanoGPT's ``config/train_shakespeare_char.py`` "baby GPT" as its
``train.py`` saves it: 6 layers, 6 heads, n_embd 384, block 256, no biases, the 65
characters of tinyshakespeare, 10,745,088 parameters (nanoGPT reports 10.65M: it leaves
out the position embedding), and AdamW's state (two moments per weight), 129 MB in all.
The weights are random (the conversion does not depend on their values); the optimizer
state is a real AdamW step. The bench does not import ``tests/``: this builder is a
trimmed copy of ``tests/helpers/nanogpt_layout.py``.

    python -m bench.conversion          # prints the measurement as JSON

:func:`cli_conversion` times ``python -m upload.convert ckpt.pt --meta meta.pkl --out
DIR`` as a user runs it (a fresh interpreter, torch imported, the worker started) and
reads the memory it took: the largest resident set of the command and its worker
(``os.wait4``), and the worker's own peak while reading (``upload.local.LocalRead``).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAKESPEARE_CHARS = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
BABY_GPT = dict(
    n_layer=6, n_head=6, n_embd=384, block_size=256, bias=False, vocab_size=65, dropout=0.2
)


def write_baby_checkpoint(folder: Path, args: dict = BABY_GPT, seed: int = 0) -> tuple[Path, Path]:
    """nanoGPT's ``ckpt.pt`` (model, AdamW state, model_args, iter_num, best_val_loss,
    config) and ``meta.pkl`` of ``args`` written to ``folder``: (ckpt path, meta path)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    C = args["n_embd"]
    shapes = {"transformer.wte.weight": (args["vocab_size"], C)}
    shapes["transformer.wpe.weight"] = (args["block_size"], C)
    for i in range(args["n_layer"]):
        p = f"transformer.h.{i}."
        shapes |= {p + "ln_1.weight": (C,), p + "attn.c_attn.weight": (3 * C, C)}
        shapes |= {p + "attn.c_proj.weight": (C, C), p + "ln_2.weight": (C,)}
        shapes |= {p + "mlp.c_fc.weight": (4 * C, C), p + "mlp.c_proj.weight": (C, 4 * C)}
    shapes["transformer.ln_f.weight"] = (C,)
    sd = {k: 0.02 * torch.randn(*s, generator=g) for k, s in shapes.items()}
    sd["lm_head.weight"] = sd["transformer.wte.weight"]  # tied: one tensor, saved once
    params = [torch.nn.Parameter(t.clone()) for k, t in sd.items() if k != "lm_head.weight"]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    optimizer.step()
    checkpoint = {
        "model": sd,
        "optimizer": optimizer.state_dict(),
        "model_args": dict(args),
        "iter_num": 5000,
        "best_val_loss": torch.tensor(1.4697),
        "config": {"dataset": "shakespeare_char", "batch_size": 64, "block_size": 256},
    }
    folder.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    torch.save(checkpoint, buf)
    ckpt, meta = folder / "ckpt.pt", folder / "meta.pkl"
    ckpt.write_bytes(buf.getvalue())
    stoi = {c: i for i, c in enumerate(SHAKESPEARE_CHARS)}
    meta.write_bytes(pickle.dumps({"vocab_size": 65, "itos": dict(enumerate(SHAKESPEARE_CHARS)),
                                   "stoi": stoi}))  # fmt: skip
    return ckpt, meta


# The command as a user runs it, printing its own peak resident set (VmHWM: the
# kernel's high-water mark of this process's memory since its exec) when it exits.
# ``os.wait4``'s ru_maxrss would not do: it keeps the larger set of the forked bench
# process from before the exec.
LAUNCH = """
import atexit, runpy, sys
def peak():
    line = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))
    print(line.strip(), file=sys.stderr)
atexit.register(peak)
sys.argv = ['upload.convert', *sys.argv[1:]]
runpy.run_module('upload.convert', run_name='__main__', alter_sys=True)
"""


def _run_cli(folder: Path) -> tuple[float, int]:
    """One ``python -m upload.convert ckpt.pt --meta meta.pkl --out converted/`` in
    ``folder``: (wall seconds, the command's own peak resident set in bytes)."""
    args = ["ckpt.pt", "--meta", "meta.pkl", "--out", "converted/"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], cwd=folder, env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"upload.convert exited with {done.returncode}: {done.stderr[-500:]}")
    kb = int(done.stderr.rsplit("VmHWM:", 1)[1].split()[0])
    return seconds, kb * 1024


def cli_conversion(runs: int = 3, folder: Path | None = None, args: dict = BABY_GPT) -> dict:
    """Time the command line's conversion of the baby GPT's 129 MB checkpoint.

    Args:
        runs: how many times the command runs (the median is reported).
        folder: where the checkpoint and the output go (default: a temporary folder).
        args: nanoGPT's ``model_args`` (a smaller model for a quick run; 65 characters).

    Returns:
        ``seconds`` (median wall time of ``python -m upload.convert``, interpreter start,
        torch import and the worker included) and ``seconds_all``; ``cli_peak_mb`` (the
        command's own peak resident set: torch, the weights it gets back, the model it
        builds and writes; largest over the runs); ``worker_peak_mb`` and
        ``worker_growth_mb`` (the reading worker's peak and its growth while it read: the
        weights, not the optimizer state); ``file_mb``, ``weights_mb``, ``output_mb`` and
        ``parameters``.
    """
    from upload.local import convert_files

    with tempfile.TemporaryDirectory(prefix="bench-convert-") as tmp:
        folder = Path(folder or tmp)
        ckpt, meta = write_baby_checkpoint(folder, args)
        timed = [_run_cli(folder) for _ in range(runs)]
        written = convert_files({"ckpt.pt": ckpt, "meta.pkl": meta}, folder / "inproc")
        read = written.read
        return {
            "seconds": statistics.median(s for s, _ in timed),
            "seconds_all": [round(s, 3) for s, _ in timed],
            "cli_peak_mb": max(r for _, r in timed) / 1e6,
            "worker_peak_mb": (read.peak_bytes or 0) / 1e6,
            "worker_growth_mb": ((read.peak_bytes or 0) - (read.rss_bytes or 0)) / 1e6,
            "file_mb": ckpt.stat().st_size / 1e6,
            "weights_mb": 4 * written.parameters / 1e6,
            "output_mb": (folder / "converted" / "ckpt.safetensors").stat().st_size / 1e6,
            "parameters": written.parameters,
        }


SMALL_GPT = dict(BABY_GPT, n_layer=4, n_head=4, n_embd=128)  # a 9.8 MB ckpt.pt (issue #24)
BUSY = "while True:\n    pass\n"  # one busy loop: a training run's share of the CPU


def busy_cli_conversion(runs: int = 3, args: dict = SMALL_GPT, loops: int = 2) -> dict:
    """The command line's conversion of a small nanoGPT checkpoint on a computer busy
    with other work: ``runs`` times with nothing else running, and ``runs`` times beside
    ``loops`` busy-loop processes (each in a session of its own, as training runs started
    from other terminals are), alternately.

    Returns:
        ``idle_s`` and ``busy_s`` (medians of the wall time of ``python -m
        upload.convert``), ``ratio`` (busy / idle; the issue's target: at most 2 with
        two loops), ``loops``, ``file_mb``, ``seconds_idle`` and ``seconds_busy`` (every run).
    """
    idle, busy = [], []
    with tempfile.TemporaryDirectory(prefix="bench-busy-") as tmp:
        ckpt, _ = write_baby_checkpoint(Path(tmp), args)
        for _ in range(runs):
            idle.append(_run_cli(Path(tmp))[0])
            hogs = [
                subprocess.Popen([sys.executable, "-c", BUSY], start_new_session=True)
                for _ in range(loops)
            ]
            try:
                busy.append(_run_cli(Path(tmp))[0])
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
        size = ckpt.stat().st_size
    return {
        "idle_s": statistics.median(idle),
        "busy_s": statistics.median(busy),
        "ratio": statistics.median(busy) / statistics.median(idle),
        "loops": loops,
        "file_mb": size / 1e6,
        "seconds_idle": [round(s, 3) for s in idle],
        "seconds_busy": [round(s, 3) for s in busy],
    }


if __name__ == "__main__":
    print(json.dumps(cli_conversion(), indent=1))

"""A GPT-2-small-sized random model, through the GPT-2-folder converter, for the bench.

``write_folder`` writes a folder exactly as ``GPT2LMHeadModel.save_pretrained`` lays it
out (``config.json``, ``model.safetensors`` in Conv1D layout, a byte-level BPE
``tokenizer.json`` of GPT-2's 50,257 ids), with random weights and without
``transformers`` (a test-only dependency): GPT-2 small's sizes, 12 layers x 12 heads,
d_model 768, context 1024, 124,439,808 parameters. ``convert`` runs it through
``upload.folders.convert_folder`` (the isolated worker, our exporter) as
``make run MODEL=DIR`` does; ``measure`` times ``inference.analysis.analyze`` at one
sentence length in a fresh process and reads that process's peak resident memory.

    python -m bench.gpt2_small runs/gpt2-small 64 1024
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

GPT2_SMALL = dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024, vocab_size=50257)
EOT = "<|endoftext|>"


def byte_level_tokenizer(vocab_size: int = GPT2_SMALL["vocab_size"]) -> str:
    """A GPT-2-style ``tokenizer.json`` of ``vocab_size`` ids: the 256 byte symbols, then
    merges of two byte symbols (in a fixed order) up to ``vocab_size - 1`` ids, then
    ``<|endoftext|>``; GPT-2's byte-level pipeline. Not GPT-2's vocabulary (that would be
    a download), but its size and kind."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())  # (256,) byte symbols
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    merges = []
    for a in alphabet:
        for b in alphabet:
            if len(vocab) >= vocab_size - 1:
                break
            merges.append((a, b))
            vocab[a + b] = len(vocab)
    vocab[EOT] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([EOT])
    return tok.to_str()


def gpt2_state(seed: int = 0, **sizes) -> dict[str, np.ndarray]:
    """Random float32 weights by GPT-2's names (``transformer.h.{i}.attn.c_attn.weight``
    ...) in its Conv1D layout, (in, out); GPT-2's initialisation (std 0.02, LayerNorm
    gains 1, biases 0); ``lm_head`` tied (not stored)."""
    s = {**GPT2_SMALL, **sizes}
    C, V, P = s["n_embd"], s["vocab_size"], s["n_positions"]
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return (0.02 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)

    state = {"transformer.wte.weight": normal(V, C), "transformer.wpe.weight": normal(P, C)}
    for i in range(s["n_layer"]):
        p = f"transformer.h.{i}."
        for name, (n_in, n_out) in {
            "attn.c_attn": (C, 3 * C),
            "attn.c_proj": (C, C),
            "mlp.c_fc": (C, 4 * C),
            "mlp.c_proj": (4 * C, C),
        }.items():
            state[p + name + ".weight"] = normal(n_in, n_out)  # Conv1D: (in, out)
            state[p + name + ".bias"] = np.zeros(n_out, np.float32)
        for ln in ("ln_1", "ln_2"):
            state[p + ln + ".weight"] = np.ones(C, np.float32)
            state[p + ln + ".bias"] = np.zeros(C, np.float32)
    state["transformer.ln_f.weight"] = np.ones(C, np.float32)
    state["transformer.ln_f.bias"] = np.zeros(C, np.float32)
    return state


def write_folder(folder: Path, seed: int = 0, **sizes) -> Path:
    """A Hugging Face folder of GPT-2 small's sizes (or ``sizes``) with random weights."""
    from safetensors.numpy import save_file

    s = {**GPT2_SMALL, **sizes}
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "n_inner": None,
        "n_ctx": s["n_positions"],
        "tie_word_embeddings": True,
        **s,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    save_file(gpt2_state(seed, **sizes), str(folder / "model.safetensors"), {"format": "pt"})
    (folder / "tokenizer.json").write_text(byte_level_tokenizer(s["vocab_size"]))
    return folder


def convert(folder: Path, out: Path) -> dict:
    """``folder`` through the converter into ``out`` (upload file and ONNX graphs), as
    the server's operator models are converted. Returns the seconds it took and what it
    wrote (paths, parameters, the reading worker's peak memory)."""
    from upload.folders import convert_folder

    start = time.perf_counter()
    done = convert_folder(folder, out, onnx=True, progress=False)
    return {
        "seconds": time.perf_counter() - start,
        "checkpoint": str(done.path),
        "graphs": [str(g) for g in done.graphs],
        "parameters": done.parameters,
        "worker_peak_mb": (done.read.peak_bytes or 0) / 1e6,
    }


_MEASURE = """
import json, sys, time
from pathlib import Path
from inference.analysis import LEAN_OUTPUTS, analyze
from inference.runtime import load_graphs
from models.tokenizer import encode
from upload import memory
inspect, fast, T, n, served = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "served"
model = load_graphs(Path(inspect), None if served else Path(fast))
text = (" a" * ((T + 1) // 2)).removeprefix(" " if T % 2 else "")  # T tokens: "a", " a" = Ġ a
assert len(encode(model.tokenizer, text).ids) == T, "the sentence is not T tokens long"
loaded = memory.reset_peak()
times = []
for _ in range(n):
    start = time.perf_counter()
    result = analyze(model, text, recurrent=False, keep=LEAN_OUTPUTS if served else None)
    times.append(time.perf_counter() - start)
    held = sum(a.nbytes for a in result.outputs.values()) + result.probs.nbytes
    del result
print(json.dumps({"times_s": times, "loaded_rss": loaded, "peak_rss": memory.peak(), "held_bytes": held}))
"""


def measure(out: Path, stem: str, T: int, rounds: int = 3, served: bool = True) -> dict:
    """``analyze`` of a T-token sentence on the graphs in ``out``, ``rounds`` times, in a
    fresh process: median seconds, that process's resident memory once the graphs are
    open, its peak during the analyses (``VmHWM``), and the bytes one analysis holds
    (the arrays a cache keeps). ``served``: as the server opens an operator's model
    (``ui/served.py``: the inspect graph only, lean analyses without ``scores`` and
    ``logits``); else both graphs and every output."""
    root = Path(__file__).resolve().parents[1]
    cmd = [
        sys.executable,
        "-c",
        _MEASURE,
        str(out / f"{stem}.inspect.onnx"),
        str(out / f"{stem}.fast.onnx"),
        str(T),
        str(rounds),
        "served" if served else "all",
    ]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True)
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "T": T,
        "served": served,
        "median_s": statistics.median(raw["times_s"]),
        "loaded_rss_mb": raw["loaded_rss"] / 1e6,
        "peak_rss_mb": raw["peak_rss"] / 1e6,
        "analysis_mb": raw["held_bytes"] / 1e6,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.gpt2_small DIR T ...``: write, convert (once) and measure."""
    args = sys.argv[1:] if argv is None else argv
    base, lengths = Path(args[0]), [int(a) for a in args[1:]] or [64, 1024]
    folder, out = base / "gpt2-small", base / "converted"
    if not (out / "gpt2-small.inspect.onnx").exists():
        if not (folder / "model.safetensors").exists():
            write_folder(folder)
        print(json.dumps(convert(folder, out)), flush=True)
    for T in lengths:
        print(json.dumps(measure(out, "gpt2-small", T)), flush=True)


if __name__ == "__main__":
    main()

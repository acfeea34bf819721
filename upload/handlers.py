"""What the upload worker does for each request (worker side; see ``upload/worker.py``).

``convert``: checkpoint files -> plain float32 weights, a validated config and a
tokenizer spec (the command line's files and folders, read by path:
``upload/local_handlers.py``). ``export`` (a fresh worker, given only what the server
checked): those weights -> our exporter's ONNX graphs. ``open``: ONNX graphs -> checked,
test-run and kept open (contract graphs, or one foreign graph with its tokenizer:
``upload/onnx_foreign.py``); after that ``inspect``, ``logits``, ``recurrent`` and
``generate`` run them on token ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from inference.sampling import Sampling
from models import contract
from upload.errors import UploadError
from upload.files import vocabulary_only
from upload.intake import EXTENSIONS, expect_format
from upload.limits import BROWSER, MAX_FILES, Limits
from upload.onnx_session import upload_session
from upload.pickles import expect_zip_file
from upload.sizes import check_file_size, check_size

if TYPE_CHECKING:
    from inference.runtime import OnnxModel

ACCEPTED = (
    "upload one model at a time: a .safetensors file, a ckpt.pt with its meta.pkl or "
    "tokenizer.json, .onnx graphs, or one .onnx language model with its tokenizer.json "
    "(or meta.pkl)"
)
VOCABULARY = ("pickle", "json")  # a nanoGPT checkpoint's meta.pkl or tokenizer.json


def _read_local(name: str, path: Path, limits: Limits) -> bytes | Path:
    """A local file of the command line: a PyTorch checkpoint stays a path (it is
    memory-mapped later); any other file is read, once its size is within ``limits``."""
    if EXTENSIONS.get(path.suffix.lower()) == "torch-zip":
        expect_zip_file(name, path, limits)
        return path
    try:
        check_file_size(name, path.stat().st_size, limits.file_bytes)
        return path.read_bytes()
    except OSError as exc:
        raise UploadError(f"{name}: cannot be read ({exc.strerror or exc})") from None


def sort_files(
    files: dict[str, bytes | Path], limits: Limits = BROWSER
) -> dict[str, dict[str, bytes | Path]]:
    """format ("safetensors", "torch-zip", "pickle", "json", "onnx") -> {name: bytes},
    each file's format judged by its content and checked against its extension. A
    ``Path`` (the command line's local file) is read here, except a PyTorch checkpoint,
    which stays a path checked by its first bytes.

    Raises:
        UploadError: no files, too many, a file too large or of another format.
    """
    if not files:
        raise UploadError("no files were uploaded")
    if len(files) > MAX_FILES:
        raise UploadError(f"too many files ({len(files)}); upload at most {MAX_FILES}")
    by_format: dict[str, dict[str, bytes | Path]] = {}
    for name, data in files.items():
        if isinstance(data, Path):
            data = _read_local(name, data, limits)
            if isinstance(data, Path):
                by_format.setdefault("torch-zip", {})[name] = data
                continue
        check_size(name, data, limits.file_bytes)
        by_format.setdefault(expect_format(name, data), {})[name] = data
    return by_format


def _nanogpt(by_format: dict, limits: Limits):
    from upload.formats.nanogpt import read_nanogpt

    (name, ckpt), source = next(iter(by_format["torch-zip"].items())), "nanoGPT checkpoint"
    vocab = {kind: list(by_format.get(kind, {}).items()) for kind in VOCABULARY}
    if len(vocab["pickle"]) + len(vocab["json"]) > 1:
        names = " and ".join(n for kind in VOCABULARY for n, _ in vocab[kind])
        raise UploadError(f"{name}: upload one vocabulary with it, not {names}")
    (meta_name, meta), (tok_name, tok) = (
        vocab[k][0] if vocab[k] else ("", None) for k in VOCABULARY
    )
    cfg, state, spec, training = read_nanogpt(
        ckpt, meta, name, tokenizer=tok, vocab_names=(meta_name, tok_name), limits=limits
    )
    return name, source, cfg, state, spec, training


def convert(
    files: dict[str, bytes | Path], limits: Limits = BROWSER
) -> tuple[dict, dict[str, np.ndarray]]:
    """Checkpoint files -> (header, float32 weights by our parameter names).

    ``files`` maps names to bytes (uploads), or to local paths (the command line, with
    ``limits`` sized to its files: ``upload.limits.local_file_limits``).
    The header holds ``config`` (dict), ``tokenizer`` (spec), ``training`` (plain data),
    ``source``, ``name`` and ``parameters``. Tied ``lm_head.weight`` is left out (it is
    ``wte.weight``).

    Raises:
        UploadError: naming the file and the problem.
    """
    by_format = sort_files(files, limits)
    kinds = set(by_format)
    if kinds == {"safetensors"} and len(files) == 1:
        from upload.formats.ours import read_ours

        (name, data), source = (
            next(iter(by_format["safetensors"].items())),
            "safetensors checkpoint",
        )
        model, spec, training = read_ours(data, name, limits)
        cfg, state = model.cfg, model.state_dict()
    elif kinds <= {"torch-zip", *VOCABULARY} and len(by_format.get("torch-zip", {})) == 1:
        name, source, cfg, state, spec, training = _nanogpt(by_format, limits)
    elif kinds <= set(VOCABULARY):
        raise UploadError(vocabulary_only(list(files)))
    elif kinds == {"safetensors", "json"} and len(by_format["safetensors"]) == 1:
        _safetensors_with_tokenizer(by_format, limits)
    else:
        raise UploadError(ACCEPTED)
    return weights_reply(cfg, state, spec, training, source, name)


def _safetensors_with_tokenizer(by_format: dict, limits: Limits) -> None:
    """A .safetensors file with a tokenizer.json: a Hugging Face checkpoint is refused
    for what it is (``read_ours``: the command that converts it); ours carries its own
    tokenizer.

    Raises:
        UploadError: always.
    """
    from upload.formats.ours import read_ours

    (name, data), tokenizers = next(iter(by_format["safetensors"].items())), by_format["json"]
    read_ours(data, name, limits)
    raise UploadError(
        f"{name}: it carries its own tokenizer in its metadata; upload it alone, without "
        f"{' and '.join(tokenizers)}"
    )


def weights_reply(
    cfg, state: dict, spec: dict, training: dict, source: str, name: str
) -> tuple[dict, dict[str, np.ndarray]]:
    """(header, float32 weights) of a conversion: the weights by our parameter names (a
    tied ``lm_head.weight`` left out: it is ``wte.weight``), the header with ``config``,
    ``tokenizer`` (spec), ``training``, ``source``, ``name`` and ``parameters``."""
    weights = {  # float32 as read (a mapped file's pages): no copy unless another dtype
        k: np.ascontiguousarray(v.detach().float().numpy())
        for k, v in state.items()
        if not (cfg.tie_weights and k == "lm_head.weight")
    }
    header = {
        "config": cfg.to_dict(),
        "tokenizer": spec,
        "training": training,
        "source": source,
        "name": name,
        "parameters": cfg.num_parameters(),
    }
    return header, weights


def open_graphs(files: dict[str, bytes]) -> tuple[dict, OnnxModel]:
    """One to three contract graphs, or one foreign graph with its tokenizer -> (header,
    a model that runs them in this process).

    Each contract graph is checked statically (``upload/onnx_checks.py``), opened on the
    CPU and run on its trial inputs (``upload/onnx_contract.py``). The header holds
    ``config``, ``tokenizer`` (spec), ``name``, ``parameters``, ``has_step`` and
    ``outputs`` (the contract outputs the inspect graph returns); a foreign graph's
    (``upload.onnx_foreign.open_foreign``) also ``source`` and ``notes``.

    Raises:
        UploadError: naming the file and the problem.
    """
    from inference.runtime import OnnxModel
    from upload.onnx_checks import graph_config, stored_parameters, validate_onnx
    from upload.onnx_contract import graph_role, run_trial

    by_format = sort_files(files)
    tokenizers = {"json", "pickle"} & set(by_format)
    if tokenizers and set(by_format) - tokenizers == {"onnx"} and len(by_format["onnx"]) == 1:
        from upload.onnx_foreign import open_foreign

        return open_foreign(files, {n: f for f, named in by_format.items() for n in named})
    if set(by_format) != {"onnx"}:
        raise UploadError(ACCEPTED)
    roles: dict[str, tuple[str, object, bytes]] = {}
    specs = []
    lab = [name for name in files if name.endswith(".lab.onnx")]
    if len(lab) == len(files):
        raise UploadError(f"{lab[0]} is a lab graph: upload its inspect graph too (or the "
                          "checkpoint, .safetensors, for the lab views)")  # fmt: skip
    for name, data in files.items():
        if name in lab:  # not run in an ONNX upload: the checkpoint brings the lab views
            continue
        model, spec = validate_onnx(data, name)
        role = graph_role(model)
        if role in roles:
            raise UploadError(f"{name} and {roles[role][0]} are both {role} graphs")
        roles[role] = (name, model, data)
        specs.append(spec)
    if len({graph_config(m) for _, m, _ in roles.values()}) > 1:
        raise UploadError("these graphs have different configs: upload graphs of one model")
    if "inspect" not in roles:
        raise UploadError("an inspect graph is needed (input_ids -> logits, attn, q, k, v, ...)")
    name, inspect_proto, _ = roles["inspect"]
    cfg = graph_config(inspect_proto)
    sessions = {
        role: (fname, upload_session(data, fname)) for role, (fname, _, data) in roles.items()
    }
    run_trial(sessions, cfg)
    outputs = [o.name for o in sessions["inspect"][1].get_outputs()]
    header = {
        "config": cfg.to_dict(),
        "tokenizer": specs[0],
        "name": name,
        "parameters": stored_parameters(inspect_proto),
        "has_step": "step" in sessions,
        "outputs": [n for n in contract.inspect_outputs(cfg.attention) if n in outputs],
    }
    if lab:
        header["notes"] = [
            f"{lab[0][:80]} was set aside: the ablation, patching and logit "
            "lens views run on a checkpoint's export (upload the .safetensors)."
        ]
    model = OnnxModel(
        name,
        cfg,
        None,
        sessions["inspect"][1],
        sessions.get("fast", (None, None))[1],
        sessions.get("step", (None, None))[1],
    )
    return header, model


def analyse(model: OnnxModel, op: str, header: dict) -> tuple[dict, dict[str, np.ndarray]]:
    """One analysis on an opened model: (reply header, arrays).

    ``inspect``: the contract outputs for ``ids``; ``logits``: (T, V); ``recurrent``:
    logits, state, normalizer; ``generate``: the new ids and their probabilities in the
    header.

    Raises:
        ValueError / inference.sessions.ModelRunError: a bad request or an onnxruntime error.
    """
    ids = [int(i) for i in header.get("ids", [])]
    if op == "inspect":
        outputs = model.inspect(ids)
        wanted = {*contract.inspect_outputs(model.config.attention), *contract.FOREIGN_OUTPUTS}
        return {}, {k: v.astype(np.float32, copy=False) for k, v in outputs.items() if k in wanted}
    if op == "logits":
        return {}, {"logits": model.logits(ids).astype(np.float32, copy=False)}
    if op == "recurrent":
        return {}, {k: v.astype(np.float32, copy=False) for k, v in model.recurrent(ids).items()}
    if op == "generate":
        sampling = Sampling.from_dict(header.get("sampling", {}))
        new, probs = model.generate(ids, int(header["n_new"]), sampling)
        return {"new": [int(i) for i in new], "probs": [float(p) for p in probs]}, {}
    raise ValueError(f"unknown request {op!r}")

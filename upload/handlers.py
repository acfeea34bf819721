"""What the upload worker does for each request (worker side; see ``upload/worker.py``).

``convert``: checkpoint files -> plain float32 weights, a validated config and a
tokenizer spec (``convert_folder``: the same for the command line's GPT-2-family folder,
read by path). ``export`` (a fresh worker, given only what the server checked): those
weights -> our exporter's ONNX graphs. ``open``: ONNX graphs -> checked, test-run and kept
open (contract graphs, or one foreign graph with its tokenizer: ``upload/onnx_foreign.py``);
after that ``inspect``, ``logits``, ``recurrent`` and ``generate`` run them on token ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from inference.sampling import Sampling
from models import contract
from upload.errors import UploadError
from upload.intake import expect_format
from upload.limits import MAX_FILES
from upload.sizes import check_size

if TYPE_CHECKING:
    from inference.runtime import OnnxModel

ACCEPTED = (
    "upload one model at a time: a .safetensors file, a ckpt.pt with its meta.pkl, .onnx "
    "graphs, or one .onnx language model with its tokenizer.json (or meta.pkl)"
)


def sort_files(files: dict[str, bytes]) -> dict[str, dict[str, bytes]]:
    """format ("safetensors", "torch-zip", "pickle", "onnx", "json") -> {name: bytes}, each file's
    format judged by its content and checked against its extension.

    Raises:
        UploadError: no files, too many, a file too large or of another format.
    """
    if not files:
        raise UploadError("no files were uploaded")
    if len(files) > MAX_FILES:
        raise UploadError(f"too many files ({len(files)}); upload at most {MAX_FILES}")
    by_format: dict[str, dict[str, bytes]] = {}
    for name, data in files.items():
        check_size(name, data)
        by_format.setdefault(expect_format(name, data), {})[name] = data
    return by_format


def convert(files: dict[str, bytes]) -> tuple[dict, dict[str, np.ndarray]]:
    """Checkpoint files -> (header, float32 weights by our parameter names).

    The header holds ``config`` (dict), ``tokenizer`` (spec), ``source``, ``name`` and
    ``parameters``. Tied ``lm_head.weight`` is left out (it is ``wte.weight``).

    Raises:
        UploadError: naming the file and the problem.
    """
    by_format = sort_files(files)
    kinds = set(by_format)
    if kinds == {"safetensors"} and len(files) == 1:
        from upload.formats.ours import read_ours

        (name, data), source = next(iter(files.items())), "safetensors checkpoint"
        model, spec = read_ours(data, name)
    elif kinds <= {"torch-zip", "pickle"} and len(by_format.get("torch-zip", {})) == 1:
        from upload.formats.nanogpt import convert_nanogpt

        (name, ckpt), source = next(iter(by_format["torch-zip"].items())), "nanoGPT checkpoint"
        metas = list(by_format.get("pickle", {}).values())
        if len(metas) > 1:
            raise UploadError("upload only one meta.pkl")
        model, spec = convert_nanogpt(ckpt, metas[0] if metas else None, name)
    elif kinds == {"pickle"}:
        raise UploadError("meta.pkl is only the vocabulary: upload it together with ckpt.pt")
    else:
        raise UploadError(ACCEPTED)
    return _reply(model.cfg, model.state_dict(), spec, source, name)


def _reply(cfg, state: dict, spec: dict, source: str, name: str) -> tuple[dict, dict]:
    """(header, float32 weights) of a conversion: the weights by our parameter names (a
    tied ``lm_head.weight`` left out: it is ``wte.weight``), the header with ``config``,
    ``tokenizer`` (spec), ``source``, ``name`` and ``parameters``."""
    weights = {  # float32 as read: no copy unless another dtype
        k: np.ascontiguousarray(v.detach().float().numpy())
        for k, v in state.items()
        if not (cfg.tie_weights and k == "lm_head.weight")
    }
    header = {
        "config": cfg.to_dict(),
        "tokenizer": spec,
        "source": source,
        "name": name,
        "parameters": cfg.num_parameters(),
    }
    return header, weights


def convert_folder(header: dict) -> tuple[dict, dict[str, np.ndarray]]:
    """The command line's ``convert_folder``: ``header["folder"]`` (the absolute path of a
    GPT-2-family folder its user chose) read by ``upload.formats.hf_gpt2.read_folder``
    with ``header["limits"]`` (``upload.limits.Limits.to_dict``, sized to the folder).
    The reply's ``memory`` says what this process held: ``rss_bytes`` before reading
    (torch imported) and ``peak_bytes`` (``upload.memory``).

    Raises:
        UploadError: naming the file and the problem.
    """
    import torch  # noqa: F401 - imported before the reading is measured

    from upload import memory
    from upload.formats.hf_gpt2 import SOURCE, read_folder
    from upload.limits import Limits

    folder = header.get("folder")
    if not isinstance(folder, str) or not Path(folder).is_absolute():
        raise ValueError("convert_folder needs an absolute folder path")
    limits = Limits.from_dict(header.get("limits"))
    before = memory.reset_peak()
    cfg, spec, state = read_folder(Path(folder), limits)
    reply, weights = _reply(cfg, state, spec, SOURCE, Path(folder).name)
    reply["memory"] = {"rss_bytes": before, "peak_bytes": memory.peak()}
    return reply, weights


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
    for name, data in files.items():
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
    sessions = {role: (fname, upload_session(data)) for role, (fname, _, data) in roles.items()}
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
    model = OnnxModel(
        name,
        cfg,
        None,
        sessions["inspect"][1],
        sessions.get("fast", (None, None))[1],
        sessions.get("step", (None, None))[1],
    )
    return header, model


def export(header: dict, weights: dict[str, np.ndarray]) -> tuple[dict, dict[str, np.ndarray]]:
    """Checked weights, config and tokenizer spec -> our exporter's graphs (as uint8 arrays).

    Runs in a fresh worker that never saw a user's file: its input is what the server
    checked (``upload/load.py``). The model is built strictly (names, shapes, finite).

    Raises:
        UploadError / ValueError: weights that do not fit the config.
    """
    import torch

    from export.graphs import export_model
    from models.checkpoint import build_model
    from models.config import ModelConfig
    from upload.tempdirs import workdir
    from upload.tokenizer_spec import build, check_spec

    name = str(header.get("name", "the checkpoint"))
    cfg = ModelConfig.from_dict(header["config"])
    tokenizer = build(check_spec(header["tokenizer"], cfg.vocab_size, name))
    model = build_model(cfg, {k: torch.from_numpy(v) for k, v in weights.items()}, name)
    with workdir() as folder:
        paths = export_model(model, folder, tokenizer, prefix="upload")
        graphs = {p.name.split(".")[1]: np.fromfile(p, np.uint8) for p in paths}
    return {"parameters": model.num_parameters()}, graphs


def upload_session(data: bytes):
    """An onnxruntime session of an uploaded graph: CPU, one thread, no log, no arena."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one core for uploads; the server keeps the other
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def analyse(model: OnnxModel, op: str, header: dict) -> tuple[dict, dict[str, np.ndarray]]:
    """One analysis on an opened model: (reply header, arrays).

    ``inspect``: the contract outputs for ``ids``; ``logits``: (T, V); ``recurrent``:
    logits, state, normalizer; ``generate``: the new ids and their probabilities in the
    header.

    Raises:
        ValueError / inference.runtime.ModelRunError: a bad request or an onnxruntime error.
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

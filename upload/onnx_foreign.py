"""A foreign ONNX language model: one graph not made by this project, plus its tokenizer
(worker side: the graph is user code and stays in its worker for good).

The graph passes the same static checks as a contract graph
(``upload.onnx_checks.check_graph``); ``upload/onnx_inputs.py`` tells its inputs (token
ids, attention mask, positions, past) and ``upload/onnx_attention.py`` its logits and
attention probabilities, which are added as graph outputs. Trial runs tell which Softmax
outputs are (…, T, T) and how long a sentence the app analyses: the graph's fixed token
axis (shorter sentences padded, only their own tokens shown) or the longest T it runs
at (at most ``MAX_FOREIGN_CONTEXT``), and never more than the outputs the app may hold
at once (``upload.sizes.activation_elements``, ``upload/limits.py``).
:class:`ForeignModel` then answers with the contract's names: ``logits`` (1, T, V),
``attn`` (L, H, T, T) and, where every Softmax input is a tensor, ``masked_scores``
(L, H, T, T).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from inference.runtime import OnnxModel
from inference.sessions import ModelRunError, short_error
from models.config import ModelConfig
from upload.errors import LibraryRefusal, UploadError
from upload.foreign_tokenizer import read_tokenizer
from upload.limits import MAX_ACTIVATION_ELEMENTS, MAX_FOREIGN_CONTEXT
from upload.onnx_attention import Candidate, classify, instrument, is_logits, not_found_line
from upload.onnx_inputs import GraphInputs, padding_note
from upload.sizes import longest_context

TRIAL_T = (3, 5)  # two lengths that tell T-axes from every other axis
SOURCE = "ONNX (foreign)"
# What the graph does not tell: placeholders in the config, "unknown" on screen.
# What a foreign graph does not tell (#44 item 24: the card printed attn_eps 1e-06, a
# linear-attention setting the graph never gave)
UNKNOWN = ("d_model", "d_mlp", "position_scheme", "bias", "ln_bias", "tie_weights",
           "scale_embedding", "attn_eps")  # fmt: skip


@dataclass
class ForeignModel(OnnxModel):
    """``OnnxModel``'s interface over a foreign graph with its attention outputs added.

    Attributes (besides OnnxModel's): ``inputs`` (what the graph takes and is fed),
    ``logits_name``, ``attention`` (the Softmax/Attention outputs found, graph order).
    A sentence shorter than a fixed token axis is padded; only its own tokens come back.
    """

    inputs: GraphInputs | None = None
    logits_name: str = ""
    attention: list[Candidate] = field(default_factory=list)

    @property
    def has_scores(self) -> bool:
        """True when every attention node's input is a tensor (Softmax nodes only)."""
        return all(c.scores is not None for c in self.attention)

    def _run(self, names: list[str], ids: list[int]) -> list[np.ndarray]:
        try:
            return self.inspect_session.run(names, self.inputs.feed(ids))
        except Exception as exc:  # onnxruntime's errors derive from Exception only
            raise ModelRunError(short_error(str(exc))) from exc

    def inspect(self, ids: list[int]) -> dict[str, np.ndarray]:
        """``logits`` (1, T, V), ``attn`` (L, H, T, T) and, when the graph has them,
        ``masked_scores`` (L, H, T, T), float32.

        Raises:
            ValueError: no tokens or more than the context. ModelRunError: onnxruntime failed.
        """
        self._check_length(ids)
        n, H = len(ids), self.config.n_head
        T = self.inputs.fixed_T or n  # what the graph runs on: n tokens and any padding
        probs = [c.probs for c in self.attention]
        scores = [c.scores for c in self.attention] if self.has_scores else []
        out = self._run([self.logits_name, *probs, *scores], ids)
        L = len(probs)
        maps = [a.reshape(H, T, T)[:, :n, :n] for a in out[1:]]  # (H, n, n) each
        result = {
            "logits": _float32(out[0]).reshape(1, T, -1)[:, :n],  # (1, n, V)
            "attn": np.stack(maps[:L]),  # (L, H, n, n)
        }
        if scores:
            result["masked_scores"] = np.stack(maps[L:])  # (L, H, n, n)
        return result

    def logits(self, ids: list[int]) -> np.ndarray:
        """Next-token logits at every position: (T, V)."""
        self._check_length(ids)
        T = self.inputs.fixed_T or len(ids)
        return _float32(self._run([self.logits_name], ids)[0]).reshape(T, -1)[: len(ids)]

    def recurrent(self, ids: list[int]) -> dict[str, np.ndarray]:
        """A foreign graph has no recurrent step graph.

        Raises:
            RuntimeError: always.
        """
        raise RuntimeError(f"{self.name} has no recurrent step graph")


def _float32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def _shapes(session, names: list[str], inputs: GraphInputs, lengths: list[int], what: str):
    """Each output's shape on each trial length."""
    shapes: dict[str, list[tuple[int, ...]]] = {n: [] for n in names}
    for T in lengths:
        ids = np.arange(T) % 2  # ids 0 and 1: in every vocabulary
        try:
            out = session.run(names, inputs.feed(ids))
        except Exception as exc:  # onnxruntime's errors derive from Exception only
            if re.search(r"alloc|memory", str(exc), re.IGNORECASE):
                raise LibraryRefusal(
                    f"it needed more memory than an upload may use (on a {T}-token test input)",
                    exc,
                ) from None  # the worker puts the files' names before it
            raise LibraryRefusal(
                f"{what}: refused: on a {T}-token test input onnxruntime could not run it "
                "(its message is in the server's log); check that the graph runs on "
                "token ids of any length up to its context on your computer",
                exc,
            ) from None
        for n, a in zip(names, out, strict=True):
            shapes[n].append(tuple(int(d) for d in np.shape(a)))
    return shapes


def _pick_logits(shapes, outputs: list[str], lengths: list[int], what: str) -> str:
    found = [n for n in outputs if is_logits(shapes[n], lengths)]
    if not found:
        raise UploadError(
            f"{what}: no logits found: looked for a float output of shape (…, T, V); "
            f"its outputs are {', '.join(f'{n} {shapes[n][0]}' for n in outputs)[:300]}"
        )
    return next((n for n in found if n == "logits"), max(found, key=lambda n: shapes[n][0][-1]))


def _runs_at(model: ForeignModel, T: int) -> bool:
    try:
        model.logits(list(np.arange(T) % 2))
        return True
    except (ModelRunError, ValueError):
        return False


def _context(model: ForeignModel, V: int, L: int, H: int, outputs: list[str]) -> tuple[int, str]:
    """(context, the card's line on it): the graph's fixed token axis, or the longest T
    it runs at (at most MAX_FOREIGN_CONTEXT), in both cases at most the largest T whose
    ``outputs`` the app holds (``upload.sizes.longest_context``, the sizing the server's
    check uses too)."""
    longest = max(MAX_FOREIGN_CONTEXT, model.inputs.fixed_T or 0)
    cfg = ModelConfig(**_config_fields(V, L, H, longest))
    fits = longest_context(cfg, MAX_ACTIVATION_ELEMENTS, outputs)
    held = (
        f"the most whose logits and attention the app holds "
        f"({MAX_ACTIVATION_ELEMENTS:,} float32 values)"
    )
    fixed = model.inputs.fixed_T
    if fixed is not None and fixed <= fits:
        return fixed, f"context: {fixed} tokens (the input's token axis is fixed)"
    if fixed is not None:
        return fits, f"Analysed up to {fits} of the graph's fixed {fixed} tokens: {held}"
    top = min(fits, MAX_FOREIGN_CONTEXT)
    model.config = ModelConfig(**_config_fields(V, L, H, top))
    if _runs_at(model, top):
        if top < MAX_FOREIGN_CONTEXT:
            return top, f"Analysed up to {top} tokens: {held}; the graph may take longer"
        return top, f"context: {top} tokens, the longest input tried"
    lo, hi = max(TRIAL_T), top  # runs at lo, fails at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _runs_at(model, mid) else (lo, mid)
    return lo, f"context: {lo} tokens, the longest input it runs at (tried up to {top})"


def _config_fields(V: int, L: int, H: int, context: int) -> dict:
    """The config of a foreign graph: what it tells, placeholders marked ``unknown``."""
    return {
        "vocab_size": V,
        "n_layer": L,
        "n_head": H,
        "d_model": H,  # placeholder (d_head 1): never shown, see ModelConfig.unknown
        "d_mlp": 1,
        "context_length": context,
        "attention": "softmax",
        "position_scheme": "learned",
        "unknown": UNKNOWN,
    }


def open_foreign(files: dict[str, bytes], formats: dict[str, str]) -> tuple[dict, ForeignModel]:
    """One foreign .onnx graph and its tokenizer -> (header, a model running it here).

    The header holds ``config`` (with ``unknown``), ``tokenizer`` (spec), ``name``,
    ``parameters``, ``has_step`` (False), ``outputs``, ``source`` ("ONNX (foreign)")
    and ``notes`` (what was found, for the model card).

    Raises:
        UploadError: naming the file: the static checks, a graph whose input or logits
            are not a language model's, no attention found ("looked for …; found 0"),
            a tokenizer that does not fit the logits, or a failed trial run.
    """
    from upload.onnx_checks import check_graph, stored_parameters
    from upload.onnx_inputs import graph_inputs
    from upload.onnx_session import upload_session
    from upload.spec_checks import check_spec

    (name,) = [n for n, f in formats.items() if f == "onnx"]
    tok_name, spec = read_tokenizer(files, formats)
    proto = check_graph(files[name], name)
    inputs = graph_inputs(proto, name, spec)
    outputs = [o.name for o in proto.graph.output]
    instrumented, found = instrument(proto)
    sess = upload_session(instrumented.SerializeToString(), name)
    del instrumented
    lengths = [inputs.fixed_T] if inputs.fixed_T else list(TRIAL_T)
    names = outputs + [n for c in found for n in (c.probs, c.scores) if n]
    shapes = _shapes(sess, names, inputs, lengths, name)
    logits_name = _pick_logits(shapes, outputs, lengths, name)
    try:
        attention = classify(found, shapes, lengths)
    except UploadError as exc:
        raise UploadError(f"{name}: {exc}") from None
    if not attention.attention:
        raise UploadError(not_found_line(name, attention))
    V, L, H = shapes[logits_name][0][-1], len(attention.attention), attention.n_head
    check_spec(spec, V, f"{name} + {tok_name}")
    model = ForeignModel(name, ModelConfig(**_config_fields(V, L, H, max(lengths))), None, sess)
    model.inputs, model.logits_name, model.attention = inputs, logits_name, attention.attention
    shown = ["logits", "attn"] + (["masked_scores"] if model.has_scores else [])
    context, how = _context(model, V, L, H, shown)
    model.config = ModelConfig(**_config_fields(V, L, H, context))
    _final_trial(model, name)
    ignored = [n for n in outputs if n != logits_name]
    header = {
        "config": model.config.to_dict(),
        "tokenizer": spec,
        "name": name,
        "parameters": stored_parameters(proto),
        "has_step": False,
        "outputs": shown,
        "source": SOURCE,
        "notes": _notes(model, [how + ".", padding_note(model, name)], ignored),
    }
    return header, model


def _final_trial(model: ForeignModel, name: str) -> None:
    """Run every output at the full context: logits and attention finite, rows sum to 1."""
    T = model.config.context_length
    try:
        out = model.inspect(list(np.arange(T) % 2))
    except ModelRunError as exc:
        raise UploadError(f"{name}: refused: on a {T}-token test input {exc}") from None
    for key in ("logits", "attn"):
        if not np.isfinite(out[key]).all():
            raise UploadError(f"{name}: refused: its {key} contain NaN or inf on a test input")
    if not np.allclose(out["attn"].sum(-1), 1.0, atol=1e-3):
        raise UploadError(f"{name}: refused: the attention found does not sum to 1 over keys")


def _notes(model: ForeignModel, lines: list[str | None], ignored: list[str]) -> list[str]:
    L, H = model.config.n_layer, model.config.n_head
    kinds = sorted({c.op for c in model.attention})
    what = " and ".join(
        "softmaxes" if k == "Softmax" else "ONNX Attention operators" for k in kinds
    )
    notes = [
        f"{L} attention layers found ({what} whose output is T × T over the keys): layers "
        f"in graph order, {H} heads each (the axes before T × T).",
        *lines,
        model.inputs.fed_note(),
        f"Outputs besides the logits ({model.logits_name}) are not used: "
        f"{', '.join(ignored[:3])}{' …' if len(ignored) > 3 else ''} ({len(ignored)} in all)."
        if ignored
        else None,
        "Not in the graph, so shown as unknown: d_model, d_head, the MLP width, the "
        "positional encoding and biases; it gives no Q, K, V, pre-mask scores or "
        "positional encoding.",
    ]
    if not model.has_scores:
        notes.append(
            "ONNX's Attention operator computes its scores inside itself: the mask view "
            "shows its probabilities only."
        )
    return [n[:400] for n in notes if n]

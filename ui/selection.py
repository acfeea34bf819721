"""What a page shows: one ``Selection``, built once per run and passed to every renderer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from inference.analysis import Analysis
from inference.runtime import OnnxModel
from ui import loaders

_RESULT = "_result"  # where a Selection keeps its analysis (its own __dict__)


@dataclass(frozen=True)
class Selection:
    """The model, sentence, layer and head chosen in the shared sidebar, the visualizer's
    view and that view's own options (query token, mode, step, ...).

    ``name`` is the model key (``softmax``, ``linear`` or ``upload``). ``view`` and
    ``options`` stay at their defaults on the lesson pages.
    """

    name: str
    model: OnnxModel
    text: str
    layer: int
    head: int
    view: str = "attention"
    options: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    # The sidebar's two places for the Layer and Head pickers until they are drawn
    # (``ui.sidebar.pickers``, then ``layer`` and ``head`` hold their values); None after.
    slots: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def result(self) -> Analysis:
        """The model's analysis of ``text`` (cached per sentence by ``ui.loaders``), computed
        on first use and kept on this object.

        Kept in the object's own ``__dict__``, not with ``functools.cached_property``: on
        Python 3.11 that takes one lock per class, so every session's analysis would wait
        behind the slowest one in the server. A Selection lives in one run's thread.

        Raises:
            inference.text_input.EmptyInput: for text without tokens.
            inference.sessions.ModelRunError: if onnxruntime fails on this input.
        """
        kept = self.__dict__.get(_RESULT)
        if kept is None:
            kept = self.__dict__[_RESULT] = loaders.get_analysis(self.name, self.text)
        return kept

    def on_view(self, view: str, options: Mapping[str, object] | None = None) -> Selection:
        """This selection on ``view`` with that view's ``options`` (the analysis kept)."""
        return self._kept(replace(self, view=view, options=MappingProxyType(dict(options or {}))))

    def at(self, layer: int, head: int) -> Selection:
        """This selection at ``layer`` and ``head``, its pickers drawn (the analysis kept)."""
        return self._kept(replace(self, layer=layer, head=head, slots=None))

    def _kept(self, chosen: Selection) -> Selection:
        if _RESULT in self.__dict__:
            chosen.__dict__[_RESULT] = self.__dict__[_RESULT]  # computed once per run
        return chosen

    def head_array(self, key: str) -> np.ndarray:
        """``outputs[key][layer, head]``: (T, d_head) for q/k/v, (T, T) for attn/scores."""
        return self.result.outputs[key][self.layer, self.head]

    @property
    def tokens(self) -> list[str]:
        """Display tokens; pieces of unknown words end with ``*``."""
        return self.result.display_tokens

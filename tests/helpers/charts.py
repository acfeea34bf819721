"""The plotly charts a page drew (``ui.chart``'s component), read back from an AppTest run."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ui.chart import COMPONENT


@dataclass(frozen=True)
class Chart:
    """One chart as the browser gets it: its key (None: unkeyed) and its payload."""

    key: str | None
    payload: dict

    @property
    def spec(self) -> dict:
        """The figure: ``{"data", "layout", "frames"?}`` (typed arrays still encoded)."""
        return self.payload["figure"]

    @property
    def figure_json(self) -> str:
        """The figure as canonical JSON, to compare two runs' figures."""
        return json.dumps(self.spec, sort_keys=True)


def plotly_charts(block) -> list[Chart]:
    """Every plotly chart in ``block`` (an ``AppTest`` or one of its blocks), in page order."""
    return [
        Chart(el.key, json.loads(el.proto.bytes))
        for el in block.get("bidi_component")
        if el.proto.component_name == COMPONENT
    ]

"""Widgets and charts as Streamlit 1.67 sends them in ``ForwardMsg`` deltas.

A widget element (``Element.<kind>``, e.g. ``selectbox``) carries its id
(``$$ID-<hash>-<key>`` when it has a key), label, options, default, the value the
server tells the browser to show (``set_value`` with ``raw_value`` / ``raw_values`` /
``value``) and, for ``bind="query-params"``, the query parameter it is bound to. The
browser answers with a ``WidgetState`` per widget, its value in the field of the
widget's kind. Source: ``streamlit/proto/*.proto`` of streamlit 1.67.
"""

from __future__ import annotations

import base64
import json
import re
import string
from dataclasses import dataclass

import numpy as np
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.common import CHART

# Widget kinds this client can set, with the WidgetState field their value travels in.
VALUE_FIELD = {
    "selectbox": "string_value",
    "radio": "string_value",
    "text_area": "string_value",
    "text_input": "string_value",
    "button_group": "string_array_value",  # segmented control, pills
    "checkbox": "bool_value",
}


@dataclass(frozen=True)
class Widget:
    """A widget as the last run drew it. ``value`` is what it shows: an option's text
    (``None`` when nothing is selected), a list of option texts for a button group
    (segmented control, pills), the text of a text box, a checkbox's bool."""

    kind: str
    id: str
    label: str
    key: str | None
    options: tuple[str, ...]
    value: object
    query_param_key: str
    fragment_id: str

    def state(self, value) -> WidgetState:
        """The ``WidgetState`` that sets this widget to ``value`` (an option's text, or a
        list of them for a button group).

        Raises:
            ValueError: for a value that is not one of the options, or a kind this
                client cannot set.
        """
        if self.kind not in VALUE_FIELD:
            raise ValueError(f"cannot set a {self.kind} widget ({self.label!r})")
        chosen = value if isinstance(value, list) else [value]
        if self.options and not set(chosen) <= set(self.options):
            raise ValueError(f"{self.label!r} has no option {value!r}; options: {self.options}")
        out = WidgetState(id=self.id)
        if self.kind == "button_group":
            out.string_array_value.data.extend(str(v) for v in chosen)
        elif self.kind == "checkbox":
            out.bool_value = bool(value)
        else:
            out.string_value = str(value)
        return out


def widget_of(element: Element, fragment_id: str = "", held: WidgetState | None = None):
    """The :class:`Widget` an element draws (None for elements that are not widgets).

    Its value is the one the server set on it (``set_value``), else ``held`` (the value
    this client sent last), else the widget's default.
    """
    kind = element.WhichOneof("type")
    proto = getattr(element, kind) if kind else None
    fields = proto.DESCRIPTOR.fields_by_name if proto is not None else {}
    if "id" not in fields or "label" not in fields:
        return None
    options = tuple(o if isinstance(o, str) else o.content for o in getattr(proto, "options", ()))
    key = proto.id.split("-", 2)[2] if proto.id.startswith("$$ID-") else None
    bound = proto.query_param_key if "query_param_key" in fields else ""
    value = _server_value(proto)
    if value is None and held is not None:
        value = _held(held)
    if value is None:
        value = _default(proto, options)
    return Widget(kind, proto.id, proto.label, key, options, value, bound, fragment_id)


def _server_value(proto):
    """The value the server told the browser to show (``set_value``), or None."""
    if not getattr(proto, "set_value", False):
        return None
    if proto.DESCRIPTOR.name == "ButtonGroup":
        return list(proto.raw_values)
    fields = proto.DESCRIPTOR.fields_by_name
    for name in ("raw_value", "value"):
        if name in fields:
            unset = fields[name].has_presence and not proto.HasField(name)
            return None if unset else getattr(proto, name)
    return None


def _held(state: WidgetState):
    """The value a ``WidgetState`` carries."""
    which = state.WhichOneof("value")
    if which == "string_array_value":
        return list(state.string_array_value.data)
    return getattr(state, which) if which else None


def _default(proto, options: tuple[str, ...]):
    """A widget's default: an option's text (None when unset) for selection widgets, a
    list for the repeated ones (a multiselect's option texts, a slider's values)."""
    fields = proto.DESCRIPTOR.fields_by_name
    if "default" not in fields:
        return None
    if proto.DESCRIPTOR.name == "ButtonGroup":
        return [options[i] for i in proto.default]
    if fields["default"].has_presence and not proto.HasField("default"):
        return None if options else ""
    indices = fields["default"].type == fields["default"].TYPE_INT32 and options
    if hasattr(proto.default, "extend"):  # repeated: a multiselect's indices, a slider's values
        return [options[i] for i in proto.default] if indices else list(proto.default)
    return options[proto.default] if indices else proto.default


def proto_of(element: Element):
    """The message inside an ``Element`` (its ``type`` oneof)."""
    return getattr(element, element.WhichOneof("type"))


def plotly_array(value) -> np.ndarray:
    """A plotly JSON array (nested lists, ``None`` as NaN, or typed
    ``{"dtype", "bdata", "shape"}``) as a float array."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if isinstance(shape, str):
            shape = [int(s) for s in shape.split(",")]
        return arr.reshape(shape).astype(float) if shape else arr.astype(float)
    return np.array(value, dtype=float)


_ESCAPED = re.compile(r"\\([" + re.escape(string.punctuation) + r"])")


def shown(body: str) -> str:
    """What a browser shows for an alert's or caption's markdown ``body``: each backslash
    escape of an ASCII punctuation character replaced by the character (CommonMark's
    rule; the app's ``ui.text.shown``, which the bench may not import)."""
    return _ESCAPED.sub(r"\1", body)


def pushed(element: Element) -> bool:
    """Whether the server told the browser to show a value (``set_value``)."""
    return bool(getattr(proto_of(element), "set_value", False))


MAIN = 0  # the first index of a delta path: the main area (1: the sidebar)
FINISHED = {  # a whole run, or a fragment's
    ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY"),
    ForwardMsg.ScriptFinishedStatus.Value("FINISHED_FRAGMENT_RUN_SUCCESSFULLY"),
}


@dataclass
class Run:
    """One script run as the session saw it."""

    ms: float  # BackMsg sent -> script_finished received (milliseconds)
    status: int  # ForwardMsg.ScriptFinishedStatus
    elements: dict[tuple[int, ...], tuple[Element, str]]  # delta path -> (element, fragment id)
    query_string: str
    sent: dict[str, WidgetState]  # widget id -> the value this client held during the run

    @property
    def finished(self) -> bool:
        """Whether the run (or the fragment's run) reached the end of the script."""
        return self.status in FINISHED

    def widgets(self) -> list[Widget]:
        """Every widget drawn, in delta-path order (main area first, then sidebar)."""
        out = []
        for path in sorted(self.elements):
            element, fragment = self.elements[path]
            proto = getattr(element, element.WhichOneof("type") or "", None)
            held = self.sent.get(getattr(proto, "id", None))
            if (w := widget_of(element, fragment, held)) is not None:
                out.append(w)
        return out

    def widget(self, *names: str) -> Widget:
        """The one widget labelled, else keyed, by the first of ``names`` that matches.

        Raises:
            LookupError: when none matches, or several share a label or key.
        """
        everything = self.widgets()
        for name in names:
            for match in (
                [w for w in everything if w.label == name],
                [w for w in everything if w.key == name],
            ):
                if len(match) > 1:
                    raise LookupError(f"{len(match)} widgets named {name!r}")
                if match:
                    return match[0]
        raise LookupError(
            f"no widget {' or '.join(map(repr, names))}; widgets: {[w.label for w in everything]}"
        )

    def plotly(self, key: str | None = None) -> dict:
        """The spec of the plotly chart (``ui.chart``'s component) keyed ``key`` (element
        id ``...-<key>``), else the first plotly chart of the main area.

        Raises:
            LookupError: when the run drew no such chart.
        """
        charts = [
            e.bidi_component
            for path, (e, _) in sorted(self.elements.items())
            if e.WhichOneof("type") == "bidi_component"
            and e.bidi_component.component_name == CHART
            and path[0] == MAIN
        ]
        keyed = [c for c in charts if key and c.id.endswith(f"-{key}")]
        chosen = keyed or charts
        if not chosen:
            raise LookupError(f"no plotly chart {key or ''} in this run")
        return json.loads(chosen[0].bytes)["figure"]  # ui.chart's payload

    def exceptions(self) -> list[str]:
        """Messages of the exceptions the run showed (``st.exception`` / uncaught)."""
        return [
            f"{e.exception.type}: {e.exception.message}"
            for e, _ in self.elements.values()
            if e.WhichOneof("type") == "exception"
        ]

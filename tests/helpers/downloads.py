"""The files behind an AppTest run's download buttons.

A button given a callable (``st.download_button(label, lambda: ...)``) registers it with
the runtime's media file manager and makes the file only when clicked; AppTest has no
click that fetches it. :func:`record_deferred` keeps every callable so registered (Streamlit's
own ``MediaFileManager.add_deferred`` still runs), and :func:`file_of` calls the one
behind a button, as the server does when the browser asks for the file.
"""

from __future__ import annotations

import contextlib
import io

from streamlit.runtime.media_file_manager import MediaFileManager


def record_deferred(monkeypatch) -> dict:
    """file id -> (callable, file name, mime type) of every deferred download registered
    from now to the end of the test (``monkeypatch`` undoes it)."""
    kept: dict = {}
    real = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        file_id = real(self, data_callable, mimetype, coordinates, file_name, **kw)
        kept[file_id] = (data_callable, file_name, mimetype)
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return kept


def buttons(at) -> dict[str, object]:
    """label -> proto of every download button the last run drew."""
    return {el.proto.label: el.proto for el in at.get("download_button")}


def file_of(at, deferred: dict, label_start: str) -> tuple[bytes, str, str]:
    """(bytes, file name, mime type) of the one button whose label starts with
    ``label_start``, made as a click makes it.

    Raises:
        AssertionError: when not exactly one button's label starts so.
    """
    found = [p for label, p in buttons(at).items() if label.startswith(label_start)]
    assert len(found) == 1, (label_start, list(buttons(at)))
    make, name, mime = deferred[found[0].deferred_file_id]
    data = make()
    with contextlib.suppress(AttributeError):
        data = data.encode()
    if isinstance(data, io.IOBase):
        data = data.read()
    return data, name, mime

"""The sidebar's "Inspect your own model" panel: the uploader, the size limit in plain
sight and the Load button (``upload.load`` checks and loads the files in a worker)."""

from __future__ import annotations

import streamlit as st

from ui import loaders
from ui.notices import body, say

OPEN = "_open_uploader"  # a link asked for an upload this session lacks: panel open
_ROUND = "_upload_round"  # loads done in this session: the uploader's key (uploader_key)


def uploader_key() -> str:
    """The uploader's widget key: ``upload_files``, then ``upload_files_<n>`` after the
    n-th load. A loaded model's files leave the uploader (a new key is a new, empty
    widget): Streamlit deep-copies every widget's value on every run, and a 43 MB
    checkpoint left in it cost that session 68 ms of server CPU a rerun, and the server
    its bytes, for as long as the tab stayed open. The uploader's value cannot be
    cleared otherwise (Streamlit refuses writes to it)."""
    n = st.session_state.get(_ROUND, 0)
    return f"upload_files_{n}" if n else "upload_files"


def upload_limit_caption() -> str:
    """The line under the uploader, in plain sight: the size limit and the command that
    shrinks a nanoGPT checkpoint below it. Streamlit's uploader refuses a larger file in
    the browser, before any code of ours sees it, and says why only in a small tooltip."""
    from upload.limits import UPLOAD_MEGABYTES
    from upload.sizes import converted_file, shrink_command

    return (
        f"Up to {UPLOAD_MEGABYTES} MB a file. A nanoGPT ckpt.pt holds its optimizer state "
        f"too, so it is often larger: on your computer, run `{shrink_command()}` "
        f"(GPT-2's vocabulary: `--tokenizer tokenizer.json`), then upload "
        f"`{converted_file()}`."
    )


TWO = (
    "A session holds at most two uploaded models: “Load as a second model” keeps the "
    "first, and the Compare models view shows them side by side with their difference. "
    "Loading again replaces one."
)


def panel() -> None:
    """Upload our .safetensors, a nanoGPT ckpt.pt (+ meta.pkl or GPT-2's tokenizer.json),
    a contract ONNX file, or any ONNX language model with its tokenizer.json (or meta.pkl).

    "Load uploaded model" puts it in the first slot (``upload``); once one is there,
    "Load as a second model" puts one beside it (``upload2``), e.g. a later checkpoint
    of the same run. The models live in this browser session only; a refused file
    leaves the previous models in place and says why.
    """
    with st.expander("Inspect your own model", expanded=st.session_state.get(OPEN, False)):
        files = st.file_uploader(
            "Checkpoint files",
            type=["safetensors", "pt", "pkl", "onnx", "json"],
            accept_multiple_files=True,
            key=uploader_key(),
            help="This project's .safetensors, a nanoGPT ckpt.pt with its meta.pkl "
            "(characters) or GPT-2's tokenizer.json (GPT-2's vocabulary), an ONNX file "
            "following the inspection contract, or any ONNX language model (e.g. "
            "torch.onnx.export of a GPT) with its tokenizer.json or meta.pkl: its attention "
            "Softmax nodes are found and shown.",
        )
        st.caption(upload_limit_caption())
        first = loaders.uploaded("upload") is not None
        if first:
            st.caption(TWO)
        if not files:
            return
        if st.button("Load uploaded model", key="upload_go", type="primary"):
            _load(files, "upload")
        if first and st.button("Load as a second model", key="upload_go_2"):
            _load(files, "upload2")


def _load(files, slot: str) -> None:
    """Check and load ``files`` into upload slot ``slot`` (``upload``, ``upload2``): the
    slot's previous model, its results and its worker let go; one line when refused."""
    from upload.load import load_upload  # torch is imported only for uploads

    bar = st.progress(0.0, text="Checking files…")
    try:
        model = load_upload(
            {f.name: f.getvalue() for f in files},
            progress=lambda frac, msg: bar.progress(min(max(frac, 0.0), 1.0), text=body(msg)),
        )
    except ValueError as exc:
        bar.empty()
        say("error", f"Not loaded: {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - a hostile file must never crash the page
        bar.empty()
        say("error", f"Not loaded: the file could not be read ({type(exc).__name__}).")
        return
    bar.empty()
    old = loaders.uploaded(slot)
    if hasattr(old, "close"):
        old.close()  # the previous upload's worker
    st.session_state[loaders.UPLOAD_SLOTS[slot]] = model
    loaders.forget_upload(slot)  # results of the previous upload in this slot
    st.session_state["pending_model"] = "upload"  # applied before the radio is drawn
    if slot == "upload2":  # the first beside the second (Compare models: B - A)
        st.session_state["vs"] = "upload2"
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1  # an empty uploader
    say("success", f"Loaded {model.name}")
    st.rerun()

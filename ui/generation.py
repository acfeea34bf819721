"""The Predictions view's generation panel: greedy or sampled continuation of the
sentence, each new token with the model's probability of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from inference.sampling import MAX_SEED, Sampling, distribution
from inference.text_input import visible
from models.tokenizer import decode, sentence_text, token_text, tokenizer_kind
from ui import loaders, presenter, sentence_ids
from ui.notices import say
from ui.selection import Selection
from ui.text import plain_lines
from viz import style
from viz import tensors as vt

GREEDY, SAMPLE = "greedy", "sample"


USE_KEY = "use_gen"
PARTIAL = "(part of a character a later token completes)"


def _use(name: str, text: str, ids: list[int]) -> None:
    """ "Use as the sentence": the continued text in the sentence box, analysed as the
    ids generated (``ui.sentence_ids``), not as the text tokenized again."""
    st.session_state["text"] = text
    sentence_ids.keep(name, text, ids)


def new_token_texts(tokenizer, new: list[int]) -> list[str]:
    """The text each generated token adds. A byte-level BPE token can end inside a UTF-8
    character (its text alone is U+FFFD): the character is shown with the token that
    completes it, the tokens before it as :data:`PARTIAL`; a SentencePiece byte token
    likewise, and its first token's space kept (decoding drops a text's first space).
    Other tokenizers' tokens are shown as they are."""
    kind = tokenizer_kind(tokenizer)
    if kind not in ("bpe", "sentencepiece"):
        return [token_text(tokenizer, tokenizer.id_to_token(t) or "") for t in new]
    lead = ""
    if kind == "sentencepiece" and new:
        first = token_text(tokenizer, tokenizer.id_to_token(new[0]) or "")
        lead = " " if first.startswith(" ") else ""
    out, shown = [], ""  # shown: the complete characters of the tokens so far
    for i in range(len(new)):
        text = lead + decode(tokenizer, new[: i + 1])
        if i < len(new) - 1:  # a partial character at the end waits for the next token
            text = text.rstrip("\ufffd")
        out.append(text[len(shown) :] if len(text) > len(shown) else PARTIAL)
        shown = max(shown, text, key=len)
    return out


def sampling_controls(vocab_size: int) -> Sampling:
    """Greedy, or temperature / top-k / top-p / seed: the rule the Generate button uses
    and the Predictions bars show."""
    c1, c2, c5, c3, c4 = st.columns([2, 2, 2, 1, 1])
    mode = c1.radio("Decoding", [GREEDY, SAMPLE], horizontal=True, key="gen_mode")
    off = mode == GREEDY
    temperature = c2.slider("Temperature", 0.1, 2.0, 1.0, 0.1, key="gen_temperature", disabled=off)
    top_k = c3.number_input(
        "Top-k (0: all)",
        0,
        vocab_size,
        0,
        key="gen_top_k",
        disabled=off,
        help="Draw only from the k most likely next tokens.",
    )
    top_p = c5.slider(
        "Top-p",
        0.05,
        1.0,
        1.0,
        0.05,
        key="gen_top_p",
        disabled=off,
        help="Draw only from the most likely tokens whose probabilities add up to p "
        "(the nucleus, Holtzman et al. 2020); 1: all.",
    )
    seed = c4.number_input("Seed", 0, MAX_SEED, 0, key="gen_seed", disabled=off)
    if off:
        return Sampling()
    return Sampling(
        temperature=float(temperature), top_k=int(top_k), seed=int(seed), top_p=float(top_p)
    )


def sampled_bars(name: str, result, pos: int, sampling: Sampling) -> dict:
    """The 8 most likely next tokens after position ``pos`` as the sampler would draw
    them: the model's probabilities reshaped by temperature, top-k and top-p
    (``inference.sampling.distribution``)."""
    p = np.maximum(result.probs[pos], np.finfo(np.float64).tiny)  # (V,)
    dist = distribution(np.log(p), sampling)  # (V,): log p are the logits up to a constant
    token = style.escape(visible(result.tokens[pos]))
    title = f"Next token after “{token}”, {sampling.describe()}"
    return vt.topk_bars(dist, loaders.get_vocab(name)[: dist.shape[0]], k=8, title=title)


def generation_panel(sel: Selection, sampling: Sampling) -> None:
    """Tokens to generate, the Generate button (decoding with ``sampling``, the rule
    :func:`sampling_controls` drew above the bars) and what it made (kept for the
    sentence it continues)."""
    model, result = sel.model, sel.result
    n = st.slider("Tokens to generate", 1, 30, 10, key="gen_n")
    if st.button("Generate", key="generate", type="primary"):
        new, probs = model.generate(result.ids, n, sampling)
        how = (
            "recurrent step graph, O(1) per token"
            if model.has_step
            else "fast graph over the whole sequence"
        )
        texts = new_token_texts(model.tokenizer, new)
        rows = [
            {"position": result.T + i, "id": t, "token": visible(s) if s != PARTIAL else s, "p": p}
            for i, (t, s, p) in enumerate(zip(new, texts, probs, strict=True))
        ]
        text = sentence_text(model.tokenizer, result.ids + new)  # no BOS: it encodes back
        ids = [*result.ids, *new]
        st.session_state["generated"] = (result.text, text, how, sampling.describe(), rows, n,
                                         ids)  # fmt: skip
    generated = st.session_state.get("generated")
    if not generated or generated[0] != result.text:  # only for the sentence it continues
        return
    _, text, how, rule, rows, asked, ids = generated
    ctx = model.config.context_length
    if len(rows) < asked:
        say(
            "info",
            f"Stopped at the model's context of {ctx} tokens: {len(rows)} of {asked} "
            "tokens generated.",
        )
    if rows:
        st.success(f"{plain_lines(text)}  \n_({rule}, {how})_")
        st.caption("Each new token with the model's probability of it when it was picked.")
        percent = {"p": st.column_config.NumberColumn("p", format="percent")}
        presenter.table(pd.DataFrame(rows), height="auto", column_config=percent,
                        float_format="{:.1%}")  # fmt: skip
        # the view runs in a fragment: the sentence box and the analysis are the app's
        if st.button(
            "Use as the sentence",
            on_click=_use,
            args=(sel.name, text, ids),
            key=USE_KEY,
            help="Every view then shows the sentence with its continuation, the token ids "
            "as generated (until you type another sentence).",
        ):
            st.rerun(scope="app")

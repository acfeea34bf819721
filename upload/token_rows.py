"""A model's token rows against its tokenizer's ids: equal, or nanoGPT's padding up to a
multiple of 64 (GPT-2's 50,257 ids in 50,304 rows), said on the model card."""

from __future__ import annotations

from upload.errors import UploadError

PAD_MULTIPLE = 64  # nanoGPT pads its vocabulary to a multiple of 64 (50257 -> 50304)


def check_rows(n_tokens: int, top_id: int, vocab_size: int, source: str) -> None:
    """The model's ``vocab_size`` token rows against a tokenizer of ``n_tokens`` tokens
    whose largest id is ``top_id``.

    Accepted: every id is a row (``top_id < vocab_size``) and either there are as many
    rows as tokens (ids may skip numbers, as a word-level vocabulary's may not, so the
    rows are counted from ``top_id + 1``), or the rows are padding up to the next
    multiple of ``PAD_MULTIPLE`` (:func:`padding_rows`).

    Raises:
        UploadError: with both numbers, e.g. "the tokenizer has 65 tokens but the model
            has 50,304 token rows (embedding and output): they do not belong together".
    """
    if top_id < vocab_size and padding_rows(top_id + 1, vocab_size) is not None:
        return
    raise UploadError(
        f"{source}: the tokenizer has {n_tokens:,} tokens (largest id {top_id:,}) but the "
        f"model has {vocab_size:,} token rows (embedding and output): they do not belong "
        "together; upload the tokenizer the model was trained with"
    )


def padding_rows(n_ids: int, vocab_size: int) -> int | None:
    """How many of ``vocab_size`` rows are padding after ``n_ids`` token ids: 0 when they
    match, ``vocab_size - n_ids`` when the rows are ``n_ids`` rounded up to the next
    multiple of ``PAD_MULTIPLE`` (nanoGPT's 50,304 for GPT-2's 50,257) or to a larger
    multiple of it at most 1 % above ``n_ids`` (Qwen2's 151,936 rows for 151,646 ids),
    else None."""
    if vocab_size == n_ids:
        return 0
    padded = -(-n_ids // PAD_MULTIPLE) * PAD_MULTIPLE
    if vocab_size == padded:
        return vocab_size - n_ids
    # a larger multiple, within 1 % (Qwen2: 151,646 ids in 151,936 rows, a multiple of 128)
    extra = vocab_size - n_ids
    wider = vocab_size % PAD_MULTIPLE == 0 and 0 < extra <= n_ids // 100
    return extra if wider else None


def vocab_note(spec: dict, vocab_size: int) -> str | None:
    """One sentence for the model card when the model's rows are padded, else None."""
    vocab = spec["stoi"] if spec["kind"] == "char" else spec["vocab"]
    n = max(vocab.values()) + 1
    pad = padding_rows(n, vocab_size)
    if not pad:
        return None
    return (
        f"The model has {vocab_size:,} token rows for the tokenizer's {n:,} ids: the last "
        f"{pad} are padding (rounded up to a multiple of {PAD_MULTIPLE}) that no text maps "
        f"to; predictions label them [id N]."
    )

"""Upload messages stay one honest line (issue #25 item 5): a file's name cannot break,
reorder or colour it, a huge number is named by its length, and a whole number too large
for any config is not called code."""

from __future__ import annotations

import io
import sys

import pytest

from upload.errors import MAX_MESSAGE_CHARS, UploadError, WorkerError, shown
from upload.pickles import load_weights_only


@pytest.mark.parametrize(
    "name, escaped",
    [
        ("evil\u202egnp.pt", "evil\\u202egnp.pt"),  # right-to-left override
        ("red\x1b[31m.pt", "red\\x1b[31m.pt"),  # an ANSI colour sequence
        ("bell\x07.pt", "bell\\x07.pt"),
        ("two\nlines.pt", "two\\nlines.pt"),
        ("zero\u200bwidth.pt", "zero\\u200bwidth.pt"),
        ("שלום.pt", "שלום.pt"),  # letters of any script stay as they are
    ],
)
def test_a_file_name_is_shown_escaped_on_one_line(name, escaped):
    for error in (UploadError, WorkerError):
        message = str(error(f"{name}: the file is empty"))
        assert message == f"{escaped}: the file is empty"
        assert all(ch.isprintable() for ch in message)


def test_a_huge_number_is_named_by_its_length():
    message = str(UploadError(f"config.json: vocab_size {10**400:,} is too large"))
    assert message == "config.json: vocab_size <a number of 401 digits> is too large"
    assert shown("12,345,678 of 1,000 values") == "12,345,678 of 1,000 values"
    assert len(shown("x" * 10**6)) == MAX_MESSAGE_CHARS


def test_a_whole_number_too_large_for_a_config_is_not_called_code():
    import torch

    buf = io.BytesIO()
    old = sys.get_int_max_str_digits()
    torch.save({"model": {}, "model_args": {"n_embd": 2 ** (2**20)}}, buf)
    assert sys.get_int_max_str_digits() == old
    with pytest.raises(UploadError) as info:
        load_weights_only("ckpt.pt", buf.getvalue())
    message = str(info.value)
    assert message.startswith("ckpt.pt: refused: it holds a whole number of more than 255")
    assert "code" not in message and "\n" not in message

"""A GPT-2-style byte-level BPE ``tokenizer.json``, built in the test (nothing is downloaded).

Trained with the tokenizers library on a little text, with GPT-2's pipeline exactly as its
published ``tokenizer.json`` has it (ByteLevel pre-tokenizer, post-processor and decoder,
no normalizer, ``<|endoftext|>`` as the last id), so the app reads it as it reads GPT-2's.
"""

from __future__ import annotations

import json

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

TEXT = [
    "First Citizen:\nBefore we proceed any further, hear me speak.\n",
    "All:\nSpeak, speak.\n",
    "the cat sat on the mat. the dog sat on the log. café, naïve, 東京 👍\n",
] * 20
EOT = "<|endoftext|>"


def gpt2_style_tokenizer(vocab_size: int = 300, legacy_merges: bool = True) -> str:
    """The JSON of a byte-level BPE tokenizer of ``vocab_size`` ids (256 bytes, merges,
    then ``<|endoftext|>``); ``legacy_merges`` writes merges as ``"a b"`` strings, as
    GPT-2's published file does (newer files write ``["a", "b"]``)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - 1,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TEXT, trainer)
    tok.add_special_tokens([EOT])
    data = json.loads(tok.to_str())
    data["model"]["vocab"][EOT] = vocab_size - 1  # in the vocabulary too, as GPT-2's
    if legacy_merges:
        data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
    return json.dumps(data)

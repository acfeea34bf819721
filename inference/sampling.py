"""How generation picks the next token from the logits: greedy, or sampled with a
temperature from the k most likely tokens, from a seeded generator.

Temperature and top-k sampling as in Holtzman et al. 2020, "The Curious Case of Neural
Text Degeneration" (section 3); greedy decoding is the temperature -> 0 limit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

MAX_TEMPERATURE = 5.0
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class Sampling:
    """The decoding rule.

    Attributes:
        temperature: 0 picks the most likely token (greedy); above 0 the logits are
            divided by it before the softmax (1: the model's own distribution).
        top_k: draw only from the k most likely tokens; 0 keeps every token.
        seed: the random generator's seed (the same seed gives the same tokens).
    """

    temperature: float = 0.0
    top_k: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        """Raises ValueError on a temperature outside [0, MAX_TEMPERATURE], a negative
        top_k or a seed outside [0, 2**32)."""
        t, k, s = self.temperature, self.top_k, self.seed
        if type(t) not in (int, float) or not 0.0 <= t <= MAX_TEMPERATURE:
            raise ValueError(f"temperature must be between 0 and {MAX_TEMPERATURE:g}, got {t!r}")
        if type(k) is not int or k < 0:
            raise ValueError(f"top_k must be an integer >= 0, got {k!r}")
        if type(s) is not int or not 0 <= s <= MAX_SEED:
            raise ValueError(f"seed must be an integer in [0, 2**32), got {s!r}")

    @property
    def greedy(self) -> bool:
        """True when the most likely token is always taken."""
        return self.temperature == 0.0 or self.top_k == 1

    def to_dict(self) -> dict:
        """Plain JSON values (for the upload worker's requests)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: object) -> Sampling:
        """The rule from :meth:`to_dict`'s output.

        Raises:
            ValueError: if ``d`` is not such a dict or a value is out of range.
        """
        if not isinstance(d, dict) or set(d) - {"temperature", "top_k", "seed"}:
            raise ValueError("sampling must be a dict of temperature, top_k and seed")
        return cls(**d)

    def describe(self) -> str:
        """A short phrase for the page, e.g. ``"greedy"`` or ``"temperature 0.8, top 5, seed 1"``."""
        if self.greedy:
            return "greedy"
        top = f", top {self.top_k}" if self.top_k else ""
        return f"sampled: temperature {self.temperature:g}{top}, seed {self.seed}"


GREEDY = Sampling()


def pick(logits: np.ndarray, sampling: Sampling, rng: np.random.Generator) -> tuple[int, float]:
    """The next token and the model's probability of it.

    Args:
        logits: (V,) next-token logits.
        sampling: the decoding rule.
        rng: the generator the draws come from (``np.random.default_rng(sampling.seed)``,
            made once per generation).

    Returns:
        ``(token, p)``: ``p = softmax(logits)[token]``, the model's own probability
        (temperature 1, whole vocabulary), whatever the rule that picked the token.
    """
    z = np.asarray(logits, dtype=np.float64).reshape(-1)  # (V,)
    p_model = np.exp(z - z.max())
    p_model /= p_model.sum()  # (V,)
    if sampling.greedy:
        token = int(np.argmax(z))
        return token, float(p_model[token])
    keep = np.arange(z.size)  # (V,)
    if 0 < sampling.top_k < z.size:
        keep = np.argpartition(-z, sampling.top_k - 1)[: sampling.top_k]  # (k,)
    w = np.exp((z[keep] - z[keep].max()) / sampling.temperature)  # (k,)
    token = int(keep[rng.choice(keep.size, p=w / w.sum())])
    return token, float(p_model[token])

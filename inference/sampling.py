"""How generation picks the next token from the logits: greedy, or sampled with a
temperature from the k most likely tokens and the nucleus of probability p, from a
seeded generator.

Temperature, top-k and top-p (nucleus) sampling as in Holtzman et al. 2020, "The Curious
Case of Neural Text Degeneration" (sections 3 and 3.1); greedy decoding is the
temperature -> 0 limit. :func:`distribution` is what :func:`pick` draws from, for the
Predictions bars.
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
        top_p: draw only from the smallest set of most likely tokens whose probability
            (after temperature and top-k) reaches p; 1 keeps every token.
    """

    temperature: float = 0.0
    top_k: int = 0
    seed: int = 0
    top_p: float = 1.0

    def __post_init__(self) -> None:
        """Raises ValueError on a temperature outside [0, MAX_TEMPERATURE], a negative
        top_k, a seed outside [0, 2**32) or a top_p outside (0, 1]."""
        t, k, s, p = self.temperature, self.top_k, self.seed, self.top_p
        if type(p) not in (int, float) or not 0.0 < p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {p!r}")
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
        if not isinstance(d, dict) or set(d) - {"temperature", "top_k", "seed", "top_p"}:
            raise ValueError("sampling must be a dict of temperature, top_k, seed and top_p")
        return cls(**d)

    def describe(self) -> str:
        """A short phrase for the page, e.g. ``"greedy"`` or ``"temperature 0.8, top 5, seed 1"``."""
        if self.greedy:
            return "greedy"
        top = f", top {self.top_k}" if self.top_k else ""
        nucleus = f", top-p {self.top_p:g}" if self.top_p < 1 else ""
        return f"sampled: temperature {self.temperature:g}{top}{nucleus}, seed {self.seed}"


GREEDY = Sampling()


def _support(z: np.ndarray, sampling: Sampling) -> tuple[np.ndarray, np.ndarray]:
    """The ids a sampled draw can pick and their probabilities: top-k of the logits
    ``z`` (V,), temperature, then the nucleus of probability ``top_p``."""
    keep = np.arange(z.size)  # (V,)
    if 0 < sampling.top_k < z.size:
        keep = np.argpartition(-z, sampling.top_k - 1)[: sampling.top_k]  # (k,)
    w = np.exp((z[keep] - z[keep].max()) / sampling.temperature)  # (k,)
    w /= w.sum()
    if sampling.top_p < 1.0:  # the most likely first, until their mass reaches p
        order = np.argsort(-w, kind="stable")  # (k,)
        mass = np.cumsum(w[order])
        n = int(np.searchsorted(mass, sampling.top_p * (1 - 1e-12))) + 1
        keep, w = keep[order[:n]], w[order[:n]] / w[order[:n]].sum()
    return keep, w


def distribution(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """(V,) the probabilities :func:`pick` draws the next token from: one-hot on the
    largest logit when greedy, else temperature, top-k and top-p applied (zero outside
    the kept tokens, summing to 1)."""
    z = np.asarray(logits, dtype=np.float64).reshape(-1)  # (V,)
    out = np.zeros_like(z)
    if sampling.greedy:
        out[int(np.argmax(z))] = 1.0
        return out
    keep, w = _support(z, sampling)
    out[keep] = w
    return out


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
    keep, w = _support(z, sampling)
    token = int(keep[rng.choice(keep.size, p=w)])
    return token, float(p_model[token])

"""The one recipe the three shipped models are trained with (issue #46).

Softmax, linear and delta differ only in their mixing rule: the data (the built-in corpus
with the same share of synthetic recall and repeat rows, ``training/recall_rows.py``), the
steps, the batch, the learning-rate schedule and the seed are these, for all three.
``make models`` passes nothing else; each model card's ``training`` record repeats them
and ``tests/training/test_recipe.py`` fails when the three cards differ in any of them.
Linear attention adds one term to its loss, the penalty on eps's share of the normalizer
(``training/eps_share.py``): a property of that mixing rule, recorded as
``eps_share_weight``.
"""

from __future__ import annotations

STEPS = 3000
BATCH_SIZE = 64  # rows of context_length tokens per step
LR = 3e-3  # AdamW's peak learning rate; linear warm-up, cosine decay to LR / 10
SEED = 0
RECALL_SHARE = 0.25  # of each batch's rows: synthetic recall and repeat rows
# The training record's keys that make the recipe; the three shipped cards agree on each.
RECIPE_KEYS = ("steps", "batch_size", "lr", "seed", "recall_share", "data", "schedule")
SCHEDULE = "linear warm-up over 5% of the steps, then cosine decay to lr / 10"

# Steps at which `--history DIR` keeps the weights (0: the initialisation; log-spaced early,
# where induction heads form, Olsson et al. 2022), for training.history.
HISTORY_STEPS = (0, 10, 20, 40, 70, 100, 150, 200, 300, 450, 650, 900, 1300, 1800, 2400, 3000)

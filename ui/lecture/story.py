"""The lecture path: twelve steps in the order of d2l.ai chapter 11 (attention mechanisms
and transformers), each with its talking points and its live figure."""

from __future__ import annotations

from lessons.architectures import attention_costs
from ui.lecture import classic, lab_steps, linear_steps, model_steps
from ui.lecture.step import Step

COSTS = attention_costs("T")

STEPS = (
    Step(
        "Attention cues: queries, keys and values",
        (
            "A **query** (what this token looks for) is compared with every **key** (what "
            "each token offers): the volitional and the nonvolitional cue.",
            "The comparisons become **weights** that sum to 1, and the output is the "
            "weighted sum of the **values**: attention pooling.",
            "In the figure, one head of the trained model: its bottom row is the last "
            "token's query, the earlier tokens it pools from (the causal mask hides the "
            "later ones).",
        ),
        model_steps.cues,
    ),
    Step(
        "Nadaraya–Watson: attention pooling with nothing learned",
        (
            "Kernel regression (1964): predict f(x) as a weighted average of training "
            "values y_i, weighted by how close x is to each x_i.",
            "The query is x, the keys are the x_i, the values the y_i; the Gaussian "
            "kernel's weights are a softmax of −(x − x_i)²/2w².",
            "A narrow kernel copies the nearest point (noisy), a wide one averages "
            "everything (flat): move w.",
        ),
        classic.nadaraya_watson,
    ),
    Step(
        "Scoring functions: additive and scaled dot product",
        (
            "Learn the score instead of fixing the kernel: **additive** w_vᵀ tanh(W_q q + "
            "W_k k) (Bahdanau 2015), or the **scaled dot product** qᵀk/√d (Vaswani 2017).",
            "The dot product is one matrix product QKᵀ for all pairs; additive needs a "
            "small network per pair.",
            "If the entries of q and k are independent with mean 0 and variance 1, qᵀk has "
            "variance d; dividing by √d brings it back to 1 whatever d is, so the softmax "
            "does not saturate. A trained head's q and k need not be like that: the "
            "scoring lesson measures one.",
        ),
        model_steps.scoring,
    ),
    Step(
        "Bahdanau attention in an encoder-decoder",
        (
            "A fixed context vector squeezes the whole source into one state: long sentences fail.",
            "With attention, every output word asks its own query (the decoder's state) "
            "over the encoder's outputs (keys = values): its own context vector.",
            "The weights are an alignment, learned without being taught; here it crosses "
            "because Tokan puts the verb last.",
        ),
        classic.bahdanau,
    ),
    Step(
        "Multi-head attention and its reshape",
        (
            "H heads attend in parallel, each in its own d_head = d_model / H dimensions, "
            "so each can look for something different.",
            "In code it is one reshape: (B, T, d_model) → (B, T, H, d_head) → (B, H, T, "
            "d_head), attention per head, then back and W_O.",
            "Same parameters as one big head: only the split differs.",
        ),
        model_steps.multi_head,
    ),
    Step(
        "Self-attention and positional encoding",
        (
            "**Self-attention**: queries, keys and values all come from the same "
            "sentence; every token reaches every token it may attend to in one step: in "
            "these causal models every earlier one and itself (an encoder's, all).",
            "Against a CNN and an RNN: O(1) sequential operations and path length 1, "
            "paid for with O(n²·d) computation.",
            "Unmasked attention ignores order (permute the tokens and its outputs permute "
            "alike); the causal mask already breaks that symmetry, and a **positional "
            "encoding** (sines and cosines of many frequencies) added to each token's "
            "embedding tells every position apart.",
        ),
        model_steps.self_attention,
    ),
    Step(
        "The transformer block",
        (
            "A block is attention (tokens talk to each other) then an MLP (each token on "
            "its own), each wrapped in LayerNorm and a **residual** add.",
            "The residual stream keeps its shape (B, T, d_model) through every block: "
            "blocks only add to it.",
            "Our models: pre-LN (GPT-2 layout), a decoder only, with a causal mask.",
        ),
        model_steps.block,
    ),
    Step(
        "What trained heads do: an induction head",
        (
            "Heads specialise: previous token, first token, and **induction**: find the "
            "earlier copy of this token and attend to what came after it.",
            "That is in-context copying: the model predicts the repetition it has seen.",
            "Measured on a random sequence repeated twice; the best head is shown.",
        ),
        model_steps.induction,
    ),
    Step(
        "Test it: knock the head out",
        (
            "An attention pattern is a correlation: the head *looks* at the copy. Does the "
            "model *use* it? Ablate the head (replace its output by its mean) and measure.",
            "Knock out the best induction head alone: the loss on the second copy of the "
            "repeated words barely moves. Knock out every induction head together: it jumps. "
            "Several heads copy, and any one of them is enough (redundancy); a head drawn at "
            "random is the control.",
            "The grid repeats the experiment for every head: an experiment, not a picture "
            "(ARENA 1.2; Olsson et al. 2022).",
        ),
        lab_steps.knock_out,
    ),
    Step(
        "Watch an induction head form",
        (
            "Training history: the three models' weights kept at 16 steps of one run, the "
            "same recipe for all three.",
            "Induction heads appear in a sudden phase change (Olsson et al. 2022): the "
            "prefix-matching score jumps, and with it the in-context learning score, the loss "
            "saved on the second copy of repeated words.",
            "Move the step: the softmax model's best head at that checkpoint, beside the "
            "same head of the other two.",
        ),
        lab_steps.watch_form,
    ),
    Step(
        "Linear attention as an RNN",
        (
            "Replace exp(qᵀk) by φ(q)ᵀφ(k), φ(x) = elu(x) + 1: the sums factor "
            "(Katharopoulos 2020).",
            "A causal linear transformer is an RNN: state S_i = S_{i−1} + φ(k_i)v_iᵀ and "
            "normalizer z_i = z_{i−1} + φ(k_i), a fixed d_head × d_head per head.",
            "The recurrent form gives the same numbers as the parallel one (measured below).",
        ),
        linear_steps.recurrence,
    ),
    Step(
        "Complexity",
        (
            f"Softmax attention builds the T × T matrix: {COSTS['softmax_time']} time, "
            f"{COSTS['softmax_memory']} memory.",
            f"Linear attention reorders the product, φ(Q)(φ(K)ᵀV): {COSTS['linear_time']} "
            f"time, {COSTS['linear_memory']} memory; cheaper as soon as T > d.",
            "Generating a token: a key/value cache that grows with T, against a state of "
            "fixed size.",
        ),
        linear_steps.complexity,
    ),
    Step(
        "A linear-time model that recalls: the delta rule",
        (
            "Linear attention's state only adds k vᵀ: pairs pile up and a key's value comes "
            "back mixed with the others (associative recall fails as pairs grow).",
            "The delta rule (DeltaNet) first reads what the state holds for k_t, then writes "
            "only the error: S_t = S_(t−1) + β_t k_t (v_t − S_(t−1)ᵀk_t)ᵀ.",
            "Same fixed-size state, O(T) time; below: recall of the three trained models "
            "against the number of pairs, counted as the top token over the whole "
            "vocabulary (solid) and by the lenient ranking rule (dotted: the right value "
            "beats the other n − 1).",
            "One recipe: all three practised this format on the same rows (the caption says "
            "so), so the curves compare architectures; dashed: words no training row held.",
        ),
        linear_steps.recall,
    ),
)

"""ModelConfig: names read from older files."""

from models.config import ModelConfig


def test_a_config_written_with_eps_loads_as_attn_eps():
    """Checkpoints and graphs written before the rename (``eps``) load as ``attn_eps``;
    a config written today says ``attn_eps``."""
    old = ModelConfig.from_dict({"vocab_size": 10, "attention": "linear", "eps": 1e-4})
    assert old.attn_eps == 1e-4
    assert "attn_eps" in old.to_dict() and "eps" not in old.to_dict()

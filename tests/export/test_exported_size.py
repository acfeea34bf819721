"""exported/ stays small enough to ship in the repository (issue #10: at most 30 MB)."""

from tests.helpers import EXPORTED

LIMIT_BYTES = 30 * 10**6


def test_exported_folder_is_at_most_30_mb():
    files = [p for p in EXPORTED.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert total <= LIMIT_BYTES, f"exported/ holds {total:,} bytes (limit {LIMIT_BYTES:,})"
    assert not [p.name for p in files if p.name.endswith(".onnx.data")]

"""README.md's contract table names exactly what ``models/contract.py`` defines."""

import re

from models import contract
from tests.helpers import ROOT


def readme_contract_names() -> dict[str, set[str]]:
    """Graph file -> the backticked input and output names in the README table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The ONNX inspection contract", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].endswith(".onnx`"):
            names = re.findall(r"`([a-z_]+)`", cells[1] + " " + cells[2])
            rows[cells[0].strip("`")] = set(names)
    return rows


def test_readme_contract_table_matches_contract_py():
    rows = readme_contract_names()
    outputs = {*contract.inspect_outputs("linear"), *contract.inspect_outputs("delta")}
    assert rows == {
        "<kind>.inspect.onnx": {contract.INPUT_NAME, *outputs},
        "<kind>.fast.onnx": {contract.INPUT_NAME, "logits"},
        contract.graph_file("linear", "step"): {*contract.STEP_INPUTS, *contract.STEP_OUTPUTS},
        contract.graph_file("delta", "step"): set().union(*contract.step_names("delta")),
        "<kind>.lab.onnx": {*contract.LAB_INPUTS, *contract.LAB_OUTPUTS},
    }
    assert set(contract.OUTPUT_RANKS) == outputs

"""``python -m attnviz``: the ``attnviz`` command (``attnviz/cli.py``)."""

from attnviz.cli import main

main()

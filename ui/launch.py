"""``make run``'s entry: start preparing the served models, then run Streamlit.

    python -m ui.launch [STREAMLIT OPTIONS] -- --model path/to/gpt2 [--context N]

``streamlit run app.py`` runs the script only when someone opens the page, so the
server's operator models (``ui/served.py``) would start converting at the first visit
(GPT-2 small: minutes). Here they start converting before the server answers anyone,
in a background thread of this same process (``ui.served.start``), which then runs
``streamlit run app.py`` with the same arguments; the app's ``ui.loaders.served_models``
finds them already under way (``ui.served.shared``).
"""

from __future__ import annotations

import sys

from ui import served, served_cache

APP = str(served_cache.ROOT / "app.py")


def main(argv: list[str] | None = None) -> None:
    """Start the served models of the arguments after ``--``, then Streamlit's CLI."""
    argv = sys.argv[1:] if argv is None else argv
    options, app_args = (argv[: argv.index("--")], argv[argv.index("--") :]) if "--" in argv \
        else (argv, [])  # fmt: skip
    script = ["app.py", *app_args[1:]]
    if served.served_folders(script):
        served.start(served.served_folders(script), served.served_context(script))
    from streamlit.web import cli

    cli.main(["run", APP, *options, *app_args], prog_name="streamlit")


if __name__ == "__main__":
    main()

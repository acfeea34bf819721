"""The wheel (``pip install .``, ``python -m build``): the clone's tree as it is, under
``site-packages/attention_visualizer/``, and ``attention_visualizer.pth`` putting that
folder on ``sys.path``.

Every package finds its files relative to the root it sits in (``exported/``,
``app.py``, ``.streamlit/config.toml``, ``bench/results/``: ``Path(__file__).parents[1]``),
so the installed tree is the clone's layout and no path changes. The packages are the
import-linter contracts' ``root_packages`` (pyproject.toml: one list of what is ours);
each ships with every file beside its modules (the app's scripts, icons, nginx.conf,
the bench's committed results). The dependencies are requirements.txt's pins.
"""

from __future__ import annotations

from pathlib import Path

import tomllib
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
ROOT_PACKAGE = "attention_visualizer"  # the folder in site-packages that holds the tree
ROOT_FILES = ["README.md", ".streamlit/config.toml", "exported/*"]  # beside app.py
SKIPPED = {"__pycache__"}


def ours() -> list[str]:
    """The top-level packages: pyproject.toml's ``[tool.importlinter] root_packages``."""
    config = tomllib.loads((HERE / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["root_packages"]


def requirements() -> list[str]:
    """requirements.txt's lines, comments dropped (its environment markers kept)."""
    lines = (HERE / "requirements.txt").read_text().splitlines()
    return [kept for line in lines if (kept := line.split("#", 1)[0].strip())]


def data_files(package: Path) -> list[str]:
    """Every file in ``package``'s folder that is not Python (nor compiled Python) nor
    in a subpackage, as globs relative to it."""
    subpackages = {p.parent for p in package.rglob("__init__.py")} - {package}
    found = []
    for path in sorted(package.rglob("*")):
        parts = set(path.relative_to(package).parts)
        if not path.is_file() or parts & SKIPPED or path.suffix in (".py", ".pyc"):
            continue
        if any(sub in path.parents for sub in subpackages):
            continue
        found.append(str(path.relative_to(package)))
    return found


class BuildPy(build_py):
    """setuptools' build_py without ``setup.py`` itself (the root folder is a package
    here), plus the ``.pth`` file that puts the tree on ``sys.path``."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if (m[0], m[1]) != (ROOT_PACKAGE, "setup")]

    def run(self):
        super().run()
        pth = Path(self.build_lib) / f"{ROOT_PACKAGE}.pth"
        pth.write_text(f"{ROOT_PACKAGE}\n")  # a relative line: site-packages/<it>


packages = find_packages(include=[f"{p}{tail}" for p in ours() for tail in ("", ".*")])
setup(
    packages=[ROOT_PACKAGE] + [f"{ROOT_PACKAGE}.{p}" for p in packages],
    package_dir={ROOT_PACKAGE: "."},
    package_data={
        ROOT_PACKAGE: ROOT_FILES,
        **{f"{ROOT_PACKAGE}.{p}": data_files(HERE / p.replace(".", "/")) for p in packages},
    },
    install_requires=requirements(),
    cmdclass={"build_py": BuildPy},
)

"""Sphinx configuration for the flask_mcp documentation.

Build (offline, warnings are errors)::

    sphinx-build -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# Import flask_mcp from this checkout, whatever the working directory.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flask_mcp

# -- Project information ------------------------------------------------------

project = "flask_mcp"
author = "flask_mcp contributors"
copyright = "flask_mcp contributors"
release = flask_mcp.__version__
version = ".".join(release.split(".")[:2])

# -- General configuration ----------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"
language = "en"
nitpicky = False
default_role = "literal"
highlight_language = "python3"

# -- autodoc ------------------------------------------------------------------

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_class_signature = "mixed"
autodoc_preserve_defaults = True

# -- HTML output --------------------------------------------------------------

html_theme = "furo" if importlib.util.find_spec("furo") is not None else "alabaster"
html_title = f"flask_mcp {release}"
html_static_path: list[str] = []

"""Sphinx configuration of fixedutf32's documentation.

Build (from the repository root, with the package and the ``docs`` extra
installed: ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API reference is generated from the docstrings (numpydoc style, read by
napoleon), so the package must be importable: autodoc imports it, and the
compiled module with it.  Nothing is fetched from the network.
"""

import fixedutf32

project = "fixedutf32"
author = "fixedutf32 contributors"
copyright = "fixedutf32 contributors, MIT licence"
release = fixedutf32.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]

# Markdown pages: headings get anchors so that pages can link to sections.
myst_heading_anchors = 3

# Docstrings are numpydoc style.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# "Attributes" sections as fields of the class, not as separate entries that
# would repeat the dataclass fields autodoc lists.
napoleon_use_ivar = True
# Types become cross-references (numpy.str_ is not read as a link target).
napoleon_preprocess_types = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "alabaster"
html_title = f"fixedutf32 {release}"
html_static_path = []

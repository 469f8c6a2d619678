"""Sphinx configuration of usvm's documentation site.

Build (from the repository root, with the package installed and docs/requirements.txt):
    python -m sphinx -W --keep-going -b html docs <out>
The gallery (docs/examples/plot_*.py) is executed on every build; an example that raises fails the build.
"""

import os

import usvm

project = "usvm"
copyright = "the usvm developers; MIT OR Apache-2.0"
release = usvm.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "examples/README.txt", "requirements.txt"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
# No intersphinx: CI builds offline.

html_theme = "furo"
html_title = f"usvm {release}"
html_static_path: list[str] = []

templates_path = ["_templates"]
# Each class documents its own methods; scikit-learn's (score, get_params, set_*_request, ...) are
# scikit-learn's to document.
autodoc_default_options = {"members": True}
_SKLEARNS = {"get_params", "set_params", "get_metadata_routing", "set_output", "score", "fit_transform"}
autodoc_typehints = "none"
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

# Matplotlib draws off-screen.
os.environ.setdefault("MPLBACKEND", "Agg")


sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "reset_modules": ("matplotlib",),
    "min_reported_time": 1,
    "remove_config_comments": True,
    "show_signature": False,
}



def _skip_sklearns(app, what, name, obj, skip, options):  # noqa: ANN001
    """scikit-learn's own methods (and its generated ``set_*_request``) are scikit-learn's to document."""
    if name in _SKLEARNS or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


def setup(app):  # noqa: ANN001
    app.connect("autodoc-skip-member", _skip_sklearns)

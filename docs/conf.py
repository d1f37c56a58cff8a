"""Sphinx configuration of the skylite documentation site.

Build from the checkout (the package must be installed: `pip install ".[docs]"`):

    sphinx-build -W --keep-going docs docs/_build/html

(`python -m sphinx` would put the checkout's unbuilt `skylite/` first on sys.path.)

Warnings are errors (-W): a broken cross-reference, a docstring whose parameters do not match
its signature (numpydoc validation, below) or a gallery example that fails stops the build.
"""
from pathlib import Path

import skylite

project = "skylite"
author = "the skylite developers"
copyright = "the skylite developers, BSD-3-Clause"
version = release = skylite.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5", "auto_examples/*.pickle"]
templates_path = ["_templates"]
default_role = "literal"              # `name` in a docstring is code, as in help()

# ---- the markdown pages (MyST) ----
myst_heading_anchors = 3              # [text](page.md#a-section) links to headings
myst_enable_extensions = ["colon_fence"]

# ---- API reference: autosummary pages, numpydoc docstrings ----
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True}
autodoc_typehints = "none"            # the types are in the numpydoc docstrings
add_module_names = False
numpydoc_show_class_members = False   # the class template lists the members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Validation of every documented docstring; a failure is a warning, so -W stops the build:
#   GL08  the object has no docstring
#   PR01  a parameter of the signature is not documented
#   PR02  a documented parameter is not in the signature
#   PR03  the documented parameters are not in the signature's order
#   PR07  a documented parameter has no description
#   PR10  "x: int" where numpydoc needs "x : int" (the parameter would be misread)
#   RT03  a Returns section entry has no description
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "PR03", "PR07", "PR10", "RT03"}
numpydoc_validation_exclude = {
    # scikit-learn's own methods, inherited unchanged (get_params, set_params, the metadata
    # routing requests scikit-learn generates for fit / score / transform arguments)
    r"\.get_params$", r"\.set_params$", r"\.set_\w+_request$", r"\.get_metadata_routing$",
    r"\.set_output$", r"\.fit_transform$",
}

# ---- gallery: examples/ run at build time, their figures and output on the page ----
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # run every example except the MPI ones (they need mpiexec -n 2; shown, not run)
    "filename_pattern": r"/(?!mpi_)[^/]+\.py$",
    "ignore_pattern": r"(__init__|_data)\.py$",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
}

# ---- HTML ----
# pages without the page-contents sidebar: benchmark tables and figures, the feature-map
# tables, examples' code
_WIDE_PAGES = ["performance", "scale", "feature_maps"] + sorted(
    f"auto_examples/{example.stem}"
    for example in (Path(__file__).resolve().parent.parent / "examples").glob("*.py"))
html_theme = "pydata_sphinx_theme"
html_title = f"skylite {release}"
html_static_path = ["_static"]
html_css_files = ["skylite.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # the page contents on the right, except on the pages whose wide content gets that
    # width instead: the benchmark pages' tables and figures, the examples' code
    "secondary_sidebar_items": {"**": ["page-toc"],
                                **{page: [] for page in _WIDE_PAGES}},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
html_sidebars = {"performance": []}   # no section navigation: the figures get the width
html_context = {"default_mode": "light"}


def _defined_outside_skylite(app, what, name, obj, skip, options):
    """Leave out the members a class inherits from scikit-learn unchanged (get_params,
    set_output, the metadata-routing requests ...): scikit-learn documents them.  The
    members skylite defines or overrides stay, inherited ones (KernelSVC.fit) too."""
    if what != "class":
        return None
    target = getattr(obj, "fget", obj)                     # properties: their getter
    module = getattr(target, "__module__", None)
    if module is None:                                     # Cython methods
        module = getattr(getattr(target, "__objclass__", None), "__module__", None)
    if isinstance(module, str) and not module.startswith("skylite"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _defined_outside_skylite)

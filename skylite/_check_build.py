"""The check that skylite's compiled extensions are there, before anything needs them.

Started from a checkout (`python` in the cloned folder), Python imports the checkout's
`skylite/` ahead of the installed package, and the checkout holds only the Cython sources:
without this check the first estimator or feature map fails with a bare
`ModuleNotFoundError: No module named 'skylite.sketch._compose'`.
"""
import importlib.util
from pathlib import Path

# one compiled module every build has; finding it does not load numpy
PROBE = "skylite._native._random"


def _source_tree(package_dir):
    """Whether package_dir is the `skylite/` folder of a source checkout."""
    root = package_dir.parent
    return (root / "pyproject.toml").is_file() and (root / "meson.build").is_file()


def build_error(package_dir, missing):
    """The ImportError that says why the compiled module `missing` is not there and what to do."""
    package_dir = Path(package_dir)
    if _source_tree(package_dir):
        return ImportError(
            f"skylite is being imported from its source tree ({package_dir}), whose compiled "
            f"extensions have not been built ({missing} is missing). Python picks this folder "
            f"before an installed skylite because it is the current folder or on sys.path. "
            f"Either start Python outside the checkout (cd elsewhere) to use the skylite that "
            f"`pip install .` installed, or build the extensions in place for development with "
            f"`pip install --no-build-isolation -e .` (meson-python, meson, ninja, Cython and "
            f"numpy installed first).")
    return ImportError(
        f"skylite in {package_dir} lacks its compiled extensions ({missing} is missing): the "
        f"installation is incomplete. Reinstall it: `pip install --force-reinstall skylite`, "
        f"or `pip install .` from a checkout.")


def check_build(package_dir):
    """Raise build_error if skylite's compiled extensions cannot be found."""
    if importlib.util.find_spec(PROBE) is None:
        raise build_error(package_dir, PROBE)

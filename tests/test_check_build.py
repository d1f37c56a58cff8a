"""Importing skylite from a checkout whose extensions are not built says so, and what to do."""
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import skylite

CHECKOUT = Path(__file__).resolve().parents[1]
BUILT_SUFFIXES = (".so", ".pyd", ".dylib")


def _unbuilt_copy(tmp_path, checkout=True):
    """The package's Python sources in tmp_path/skylite (no compiled module), and the
    checkout's pyproject.toml and meson.build beside it when checkout."""
    shutil.copytree(Path(skylite.__file__).parent, tmp_path / "skylite",
                    ignore=shutil.ignore_patterns(*(f"*{s}" for s in BUILT_SUFFIXES),
                                                  "__pycache__"))
    if checkout:
        for name in ("pyproject.toml", "meson.build"):
            shutil.copy(CHECKOUT / name, tmp_path / name)
    assert not [p for p in (tmp_path / "skylite").rglob("*") if p.suffix in BUILT_SUFFIXES]


def _python_in(folder, code):
    """Run code with folder as the current folder, as `python` started there: no site hooks
    (an editable install's import hook would find the real build), the installed packages
    (numpy, scikit-learn) still importable."""
    env = {"PYTHONPATH": sysconfig.get_paths()["purelib"], "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-S", "-c", code], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)


def test_import_from_an_unbuilt_checkout_says_what_to_do(tmp_path):
    _unbuilt_copy(tmp_path)
    result = _python_in(tmp_path, "import skylite")
    assert result.returncode != 0
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: skylite is being imported from its source tree")
    assert str(tmp_path / "skylite") in message
    assert "compiled extensions have not been built" in message
    assert "outside the checkout" in message and "`pip install .`" in message
    assert "pip install --no-build-isolation -e ." in message


def test_an_unbuilt_copy_outside_a_checkout_asks_for_a_reinstall(tmp_path):
    _unbuilt_copy(tmp_path, checkout=False)
    result = _python_in(tmp_path, "import skylite")
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: skylite in ")
    assert "installation is incomplete" in message and "--force-reinstall" in message


@pytest.mark.parametrize("name, module", [("KernelSVC", "skylite.sketch._compose"),
                                          ("sketch", "skylite.sketch._compose")])
def test_lazy_loading_names_a_missing_compiled_module(monkeypatch, name, module):
    """A build missing one extension (the probe is there): the first use of a lazy name
    raises the same explanation, naming the missing module, instead of a bare
    ModuleNotFoundError."""
    def missing(requested):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    monkeypatch.delitem(vars(skylite), name, raising=False)
    monkeypatch.setattr(skylite._importlib, "import_module", missing)
    with pytest.raises(ImportError, match="lacks its compiled extensions|source tree") as info:
        getattr(skylite, name)
    assert module in str(info.value)
    assert not isinstance(info.value, ModuleNotFoundError)


def test_lazy_loading_passes_other_missing_modules_on(monkeypatch):
    def missing(requested):
        raise ModuleNotFoundError("No module named 'scipy'", name="scipy")

    monkeypatch.delitem(vars(skylite), "kernels", raising=False)
    monkeypatch.setattr(skylite._importlib, "import_module", missing)
    with pytest.raises(ModuleNotFoundError, match="scipy"):
        skylite.kernels


def test_the_built_package_imports_without_numpy(tmp_path):
    """The check finds the compiled probe without loading it: `import skylite` stays light."""
    result = subprocess.run([sys.executable, "-c",
                             "import sys, skylite; print('numpy' in sys.modules)"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"

"""The shape of the package: no import cycle between skylite's modules, and no module longer
than MAX_LINES.

The import graph has a node per module (a .py file, or a .pyx / .pxd pair, which is one
module) and an edge a -> b when a imports b anywhere in its file, function bodies and
`if TYPE_CHECKING:` blocks included: Import and ImportFrom nodes of the .py files (parsed with
`ast`, relative imports resolved), and the `import` / `cimport` statements of the .pyx and .pxd
files.  `from p import name` imports the submodule p.name when there is one, else p; importing
a package imports its __init__.  An import counts for the module it names, not for the
packages around it (their __init__ run first, but every module would then import
skylite/__init__).  Only modules of the scanned package count.
"""
import ast
import re
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "skylite"
MAX_LINES = 600
SOURCE_SUFFIXES = (".py", ".pyx", ".pxd")
# Tempita templates of Cython modules (`_fastfood.pyx.tp` is the source of `_fastfood`)
TEMPLATE_SUFFIXES = (".pyx.tp", ".pxd.tp")


def _source_suffix(path):
    """The suffix that makes `path` a module's source ('.pyx.tp' for a template), or None."""
    for suffix in TEMPLATE_SUFFIXES:
        if path.name.endswith(suffix):
            return suffix
    return path.suffix if path.suffix in SOURCE_SUFFIXES else None

# `from x import ...` / `from x cimport ...` (names up to the end of the line, or a
# parenthesized list over several lines) and `import x, y` / `cimport x`, at any indentation
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n]*)",
                          re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*c?import[ \t]+([^\n]+)", re.MULTILINE)
_TRIPLE_QUOTED = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_COMMENT = re.compile(r"#[^\n]*")


def module_name(path, root):
    """The dotted name of the module in `path` (a file under `root`, the directory that holds
    the top-level package): skylite/prox/_losses.pyx -> skylite.prox._losses,
    skylite/prox/__init__.py -> skylite.prox."""
    parts = list(path.relative_to(root).parts)
    parts[-1] = parts[-1][:len(parts[-1]) - len(_source_suffix(path) or path.suffix)]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(root, package):
    """module name -> its source files (.py, or the .pyx and .pxd of a Cython module)."""
    modules = {}
    for path in sorted((root / package).rglob("*")):
        if _source_suffix(path) and path.is_file():
            modules.setdefault(module_name(path, root), []).append(path)
    return modules


def _resolve(name, level, importer, is_package):
    """The absolute module named by `from <level dots><name> import`, seen from `importer`
    (a package's __init__ when is_package)."""
    if level == 0:
        return name
    base = importer.split(".")
    base = base[:len(base) - (level - 1 if is_package else level)]
    if not base:
        raise ValueError(f"relative import beyond the top-level package in {importer}")
    return ".".join(base + ([name] if name else []))


def _imported_names(text):
    """The (module, level, names) of the import statements of Python or Cython source."""
    try:
        tree = ast.parse(text)
    except SyntaxError:   # Cython: scan the statements, without strings and comments
        code = _COMMENT.sub("", _TRIPLE_QUOTED.sub("", text))
        for match in _FROM_IMPORT.finditer(code):
            dots = len(match[1]) - len(match[1].lstrip("."))
            names = [n.split()[0] for n in match[2].strip("()").replace("\n", " ").split(",")
                     if n.strip()]
            yield match[1][dots:], dots, names
        for match in _IMPORT.finditer(code):
            for alias in match[1].split(","):
                yield alias.split()[0], 0, []
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, 0, []
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level, [alias.name for alias in node.names]


def import_graph(root, package):
    """module -> the set of modules of `package` it imports (see the module docstring).

    Parameters
    ----------
    root : Path
        The directory that holds the package's directory.
    package : str
        The top-level package's name.
    """
    sources = source_files(root, package)
    graph = {module: set() for module in sources}
    for module, paths in sources.items():
        for path in paths:
            is_package = path.stem == "__init__"
            for name, level, names in _imported_names(path.read_text()):
                target = _resolve(name, level, module, is_package)
                if target != package and not target.startswith(package + "."):
                    continue
                for imported in [f"{target}.{n}" for n in names] or [target]:
                    if imported not in sources:       # a name from the module, not a submodule
                        imported = target
                    while imported and imported not in sources:   # the deepest module
                        imported = imported.rpartition(".")[0]
                    if imported and imported != module:
                        graph[module].add(imported)
    return graph


class Cycle(NamedTuple):
    """A strongly connected component of the import graph with more than one module: every
    module of `members` imports every other one, directly or not; `path` is one shortest
    cycle a -> b -> ... -> a through its first member."""
    path: list
    members: list


def cycles(graph):
    """The `Cycle`s of `graph`, one per strongly connected component with more than one
    module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(Cycle(_cycle_through(graph, component),
                                                sorted(component)))
    return components


def _cycle_through(graph, component):
    """A cycle a -> ... -> a inside a strongly connected component, from its first module
    (breadth-first: a shortest one)."""
    start = min(component)
    parent, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph[node] & component):
                if succ == start:
                    path = [node]
                    while parent[path[-1]] is not None:
                        path.append(parent[path[-1]])
                    return path[::-1] + [start]
                if succ not in parent:
                    parent[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def long_modules(root, package, max_lines):
    """(path, lines) of the .py and .pyx files of `package` longer than max_lines, longest
    first."""
    lengths = [(str(path.relative_to(root)), len(path.read_text().splitlines()))
               for path in (root / package).rglob("*")
               if (path.suffix in (".py", ".pyx") or path.name.endswith(".pyx.tp"))
               and path.is_file()]
    return sorted(((p, n) for p, n in lengths if n > max_lines), key=lambda pn: -pn[1])


def describe(cycle, root):
    """A cycle's path and the files of all its members, for a failure message."""
    sources = source_files(root, cycle.path[0].split(".")[0])
    files = [str(path.relative_to(root)) for module in cycle.members for path in sources[module]]
    return " -> ".join(cycle.path) + "\n    files of its modules: " + ", ".join(files)


# ---- the package ----------------------------------------------------------------------------

def test_no_import_cycle():
    """No module of skylite imports itself back through other modules."""
    found = cycles(import_graph(ROOT, PACKAGE))
    assert not found, "import cycles:\n  " + "\n  ".join(describe(c, ROOT) for c in found)


def test_no_module_is_longer_than_the_limit():
    """One concept per module: no .py or .pyx file of skylite has more than MAX_LINES lines."""
    offenders = long_modules(ROOT, PACKAGE, MAX_LINES)
    assert not offenders, (f"modules longer than {MAX_LINES} lines: "
                           + ", ".join(f"{p} ({n})" for p, n in offenders))


def test_every_benchmark_and_example_script_compiles():
    """The scripts under benchmarks/ and examples/ are not imported by the tests: a syntax
    error in one would only show when someone runs it."""
    scripts = sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    assert len(scripts) > 10
    broken = []
    for script in scripts:
        try:
            compile(script.read_text(), str(script), "exec")
        except SyntaxError as error:
            broken.append(f"{script.relative_to(ROOT)}: {error.msg} (line {error.lineno})")
    assert not broken, "scripts that do not compile: " + "; ".join(broken)


def test_the_graph_sees_the_package():
    """The scan finds skylite's modules and their imports of every kind (so that an empty
    graph cannot pass for an acyclic one)."""
    graph = import_graph(ROOT, PACKAGE)
    assert len(graph) > 50
    assert "skylite.prox._losses" in graph["skylite.admm._prox_kernels"]   # cimport
    assert "skylite.prox._checks" in graph["skylite.prox._losses"]         # relative, .pyx
    assert "skylite.prox" in graph["skylite.persistence"]                  # package: __init__
    assert "skylite.prox.coding" in graph["skylite.prox"]                  # from . import coding


# ---- the checks themselves, on synthetic packages -------------------------------------------

def write_package(root, files):
    """Write {relative path: source} under root (directories get an empty __init__.py)."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            if parent != Path(".") and not (root / parent / "__init__.py").exists():
                (root / parent / "__init__.py").write_text("")
        path.write_text(text)


ACYCLIC = {
    "pkg/__init__.py": "from .core import run\n",
    "pkg/core.py": "import numpy\nfrom . import util\n\ndef run():\n    from .sub import leaf\n",
    "pkg/util.py": "def helper():\n    return 1\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/leaf.py": "from ..util import helper\nimport pkg.sub.kernel\n",
    "pkg/sub/kernel.pxd": "cdef double f(double x) noexcept nogil\n",
    "pkg/sub/kernel.pyx": ('"""A kernel; its caller does\n\n    from pkg.core import run\n"""\n'
                           "# from pkg.core import run (a comment)\n"
                           "from libc.math cimport exp\n"
                           "from pkg.util cimport (helper,\n    other)\n"
                           "cdef double f(double x) noexcept nogil:\n    return exp(x)\n"),
}


def test_graph_of_a_synthetic_package(tmp_path):
    """Function-level, relative, package, Cython and `import a.b.c` imports are edges;
    docstrings, comments and other packages are not."""
    write_package(tmp_path, ACYCLIC)
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": {"pkg.core"},
        "pkg.core": {"pkg.util", "pkg.sub.leaf"},
        "pkg.util": set(),
        "pkg.sub": set(),
        "pkg.sub.leaf": {"pkg.util", "pkg.sub.kernel"},
        "pkg.sub.kernel": {"pkg.util"},
    }
    assert cycles(graph) == []


@pytest.mark.parametrize("closing_file, closing_import, members", [
    ("pkg/util.py", "def late():\n    from .sub import leaf\n",
     {"pkg.util", "pkg.sub.leaf", "pkg.sub.kernel"}),
    ("pkg/sub/kernel.pyx", "from pkg cimport core\n",
     {"pkg.core", "pkg.sub.leaf", "pkg.sub.kernel"}),
    ("pkg/util.py", "import pkg\n",
     {"pkg", "pkg.core", "pkg.util", "pkg.sub.leaf", "pkg.sub.kernel"}),
])
def test_a_cycle_is_found_and_named(tmp_path, closing_file, closing_import, members):
    """One import more closes a cycle: it is reported with all the modules on it and a path
    through some of them, and the message names their files."""
    files = dict(ACYCLIC)
    files[closing_file] += closing_import
    write_package(tmp_path, files)
    graph = import_graph(tmp_path, "pkg")
    found = cycles(graph)
    assert len(found) == 1
    path = found[0].path
    assert set(found[0].members) == members and path[0] == path[-1]
    assert set(path) <= members and len(path) == len(set(path)) + 1
    for a, b in zip(path, path[1:]):
        assert b in graph[a]
    assert closing_file in describe(found[0], tmp_path)


def test_long_modules_of_a_synthetic_package(tmp_path):
    """Files over the limit are named with their lengths, longest first; .pxd files and
    files at the limit pass."""
    write_package(tmp_path, {"pkg/a.py": "x = 1\n" * 10, "pkg/b.pyx": "x = 1\n" * 12,
                             "pkg/c.py": "x = 1\n" * 5, "pkg/d.pxd": "x = 1\n" * 50})
    assert long_modules(tmp_path, "pkg", 5) == [("pkg/b.pyx", 12), ("pkg/a.py", 10)]
    assert long_modules(tmp_path, "pkg", 12) == []

"""The import layers of dpaudit (pyproject.toml [tool.importlinter], docs/method/architecture.md):
no import from a lower layer to a higher one, no import cycle, every module in a layer.
Imports inside functions count like any other (grimp reads every import statement).

grimp reads the package from one folder, but dpaudit installs from two (the top-level
algorithms/ becomes dpaudit.algorithms, pyproject's ``package-dir``): the checks run on a copy
of the installed layout, built from pyproject.toml."""
import shutil
import sys
import tomllib

import grimp
import pytest
from conftest import ROOT, package_folders
import importlinter.cli
from importlinter.cli import lint_imports

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
LAYERS = CONFIG["contracts"][0]["layers"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A folder holding dpaudit as pip installs it (each package of pyproject.toml copied from
    its checkout folder), searched first for ``dpaudit`` while a test runs."""
    site = tmp_path_factory.mktemp("site")
    for pkg, folder in package_folders().items():
        shutil.copytree(folder, site / pkg.replace(".", "/"), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(site))
    for name in [m for m in sys.modules if m == "dpaudit" or m.startswith("dpaudit.")]:
        mp.delitem(sys.modules, name)          # grimp finds a package through sys.modules first
    yield site
    mp.undo()


@pytest.fixture(scope="module")
def graph(installed):
    return grimp.build_graph("dpaudit", cache_dir=None)


def test_the_installed_layout_holds_every_module_of_the_checkout(installed):
    files = {p.relative_to(installed).as_posix() for p in installed.rglob("*.py")}
    assert "dpaudit/algorithms/adap_tt/algorithm.py" in files and "dpaudit/commands/cli.py" in files
    assert len(files) == sum(len(list(f.glob("*.py"))) for f in package_folders().values())


def cycles(graph) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of two or more
    modules (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            if len(comp) > 1:
                out.append(sorted(comp))

    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return out


def _lint(tmp_path, monkeypatch, layers) -> int:
    cfg = tmp_path / "contract.toml"
    cfg.write_text('[tool.importlinter]\nroot_package = "dpaudit"\n\n'
                   '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\n'
                   "layers = [" + ", ".join(f'"{x}"' for x in layers) + "]\n")
    monkeypatch.chdir(tmp_path)
    # import-linter's logging set-up (logging.config.dictConfig) closes every existing handler,
    # among them absl's (imported by dp-accounting), whose stream is pytest's captured stderr
    monkeypatch.setattr(importlinter.cli, "_configure_logging", lambda verbose: None)
    return lint_imports(config_filename=str(cfg), no_cache=True, no_logo=True)


def test_no_import_runs_from_a_lower_layer_to_a_higher_one(installed, tmp_path, monkeypatch,
                                                           capsys):
    assert _lint(tmp_path, monkeypatch, LAYERS) == 0, capsys.readouterr().out
    # the contract is live: with the base layer on top, the modules that import errors break it
    assert _lint(tmp_path, monkeypatch, [LAYERS[-1], *LAYERS[:-1]]) == 1
    assert "is not allowed to import dpaudit.errors" in capsys.readouterr().out


def test_every_module_is_in_a_layer(graph):
    # a layer lists packages or modules; a package whose modules sit in different layers (e.g.
    # statistics: stats at the base, measure above the algorithms) lists them one by one
    listed = [x.strip() for layer in LAYERS for x in layer.split(":")]
    assert len(listed) == len(set(listed)) and set(listed) <= graph.modules
    missing = sorted(m for m in graph.modules
                     if not any(m == e or m.startswith(e + ".") for e in listed)
                     and not any(e.startswith(m + ".") for e in listed))  # packages above them
    assert missing == []
    twice = sorted(m for m in graph.modules
                   if sum(m == e or m.startswith(e + ".") for e in listed) > 1)
    assert twice == []


def test_no_import_cycle(graph):
    assert cycles(graph) == []
    # the check finds one: the registry's old circle (the catalogue imported the algorithms,
    # each algorithm module imported the registry to register itself)
    g = grimp.ImportGraph()
    for a, b in (("p.registry", "p.algorithms.x"), ("p.algorithms.x", "p.registry"),
                 ("p.algorithms.x", "p.errors"), ("p.registry", "p.errors")):
        g.add_import(importer=a, imported=b)
    assert cycles(g) == [["p.algorithms.x", "p.registry"]]


@pytest.mark.parametrize("module", ["dpaudit.algorithms.adap_tt.algorithm",
                                    "dpaudit.algorithms.dp_bai.algorithm",
                                    "dpaudit.algorithms.ldp_thresholding.algorithm"])
def test_the_algorithms_import_the_contract_not_the_catalogue(graph, module):
    catalogue, contract = "dpaudit.algorithms.registry", "dpaudit.algorithms.spec"
    assert graph.find_shortest_chain(importer=module, imported=catalogue) is None
    assert graph.find_shortest_chain(importer=module, imported=contract) is not None


def test_the_tests_mirror_the_packages():
    # tests/<layer>/ for each subpackage of dpaudit, tests/algorithms/ for the reference
    # implementations; hostile/ holds the hostile-input cases (tests/data/ is also the data
    # layer's folder and holds the result files the report tests read)
    folders = {p.name for p in (ROOT / "tests").iterdir()
               if p.is_dir() and p.name not in ("hostile", "__pycache__")
               and not p.name.startswith(".")}
    packages = {p.name for p in (ROOT / "dpaudit").iterdir() if (p / "__init__.py").is_file()}
    assert folders == packages | {"algorithms"}
    assert all(list((ROOT / "tests" / f).glob("test_*.py")) for f in folders)

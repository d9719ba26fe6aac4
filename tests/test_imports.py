"""The packages show the design: no import cycle, imports only as the layer table in
``docs/architecture.md`` allows, no reach into another package's private module, and few
modules loose in ``bot/``.

The imports are read from the source (``ast``), every one of them: at module
level, inside functions and under ``TYPE_CHECKING``, since each is a
dependency of the design whether or not it runs at import time.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LOOSE_MODULES = 8
LAYERS = ROOT / "docs" / "architecture.md"

# Imports the layer table does not allow yet, each kept for a reason; the test fails
# too when one of them is gone, so the list shrinks as they are fixed.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("bot.human.capability", "bot.questions.records"): (
        "the capability writes the bridge's Question row itself (issue 40 item 1 gives the "
        "capability a pause value of its own, which bot/service turns into the row)"
    ),
    ("bot.human.ports", "bot.questions.records"): (
        "the ledger and consumption ports take the bridge's Question and Closing (item 1)"
    ),
    ("bot.human.pause_event", "bot.questions.records"): (
        "a pause reports the Question the capability wrote, and its PendingInterrupt and "
        "token claims are read off that row (as long as the capability writes the row)"
    ),
    ("bot.demo._agent", "bot.app.agent_spec"): (
        "the demo is a deployment's agent factory (BOT_AGENT's default) and returns the "
        "AgentSpec the README documents at bot.app.agent_spec, as every deployment does"
    ),
    ("bot.demo._agent", "bot.app.settings"): (
        "a deployment's agent factory is called with the Settings (bot.app.settings)"
    ),
}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in ("bot", "adapters"):
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Each module's edges to the modules of ours it imports (the one named, not its parents)."""

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [ours(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else ours(base)
                    for alias in node.names
                ]
            edges[module].update(t for t in targets if t and t != module)
    return edges


def _cycles(nodes: Iterable[str], edges: Mapping[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            step = next(iter(successors), None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
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
                    found.add(frozenset(component))
    return found


def _package(module: str) -> str:
    """The top package a module belongs to (``bot.stores.sqlite._db`` -> ``bot.stores``);
    a module loose in ``bot/`` is a package of its own."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _layer_table(text: str) -> dict[str, set[str]]:
    """Each package of the table's first column and the packages it may import (``*``: any)."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        allowed = set(re.findall(r"`([^`]+)`", cells[1]))
        for package in re.findall(r"`([^`]+)`", cells[0]):
            assert package not in table, f"{package} has two rows"
            table[package] = allowed
    return table


def _against_the_table(
    edges: Mapping[str, set[str]], table: Mapping[str, set[str]]
) -> set[tuple[str, str]]:
    """The module imports whose packages the table does not let meet."""
    found = set()
    for source, targets in edges.items():
        for target in targets:
            a, b = _package(source), _package(target)
            if a != b and not ({b, "*"} & table.get(a, set())):
                found.add((source, target))
    return found


def _private_reaches(modules: Mapping[str, Path], edges: Mapping[str, set[str]]) -> set[str]:
    """Imports of a ``_private`` module from outside the package that holds it."""
    found = set()
    for source, targets in edges.items():
        home = source if modules[source].name == "__init__.py" else source.rpartition(".")[0]
        for target in targets:
            owner, _, name = target.rpartition(".")
            private = name.startswith("_") and not name.startswith("__")
            if private and not f"{home}.".startswith(f"{owner}."):
                found.add(f"{source} -> {target}")
    return found


def test_every_package_has_a_row_in_the_layer_table() -> None:
    """A package new to bot/ or adapters/ is placed in docs/architecture.md's layer table."""
    table = _layer_table(LAYERS.read_text())
    assert sorted({_package(m) for m in _modules()} - table.keys()) == []
    assert sorted(table.keys() - {_package(m) for m in _modules()}) == []


def test_imports_keep_to_the_layer_table() -> None:
    """Every import between packages is one the table allows, or a listed exception."""
    modules = _modules()
    against = _against_the_table(_imports(modules), _layer_table(LAYERS.read_text()))
    assert sorted(against - EXCEPTIONS.keys()) == []
    assert sorted(EXCEPTIONS.keys() - against) == []  # an exception fixed leaves the list


def test_no_import_reaches_into_another_packages_private_module() -> None:
    """A package's ``_private`` modules are imported only from inside it."""
    modules = _modules()
    assert sorted(_private_reaches(modules, _imports(modules))) == []


def test_the_layer_checks_find_what_they_are_shown() -> None:
    """The checks themselves: an upward import, a reach into a private module, a table row."""
    table = _layer_table(
        "x\n## Layers\n| package | may import |\n| --- | --- |\n"
        "| `bot.a`, `bot.b` | `bot.c` |\n| `bot.c` | nothing |\n| `bot.d` | `*` |\n"
    )
    assert table == {"bot.a": {"bot.c"}, "bot.b": {"bot.c"}, "bot.c": set(), "bot.d": {"*"}}
    edges = {"bot.a.x": {"bot.c.y"}, "bot.c.y": {"bot.a.x"}, "bot.d": {"bot.a.x"}}
    assert _against_the_table(edges, table) == {("bot.c.y", "bot.a.x")}
    here = Path(__file__)
    modules = {"bot.a.x": here, "bot.a._p": here, "bot.c.y": here, "bot.a.sub.z": here}
    reaches = {"bot.c.y": {"bot.a._p"}, "bot.a.x": {"bot.a._p"}, "bot.a.sub.z": {"bot.a._p"}}
    assert _private_reaches(modules, reaches) == {"bot.c.y -> bot.a._p"}


def test_no_module_imports_itself_around_a_circle() -> None:
    """No chain of imports between our modules leads back to where it started."""
    modules = _modules()
    assert _cycles(sorted(modules), _imports(modules)) == set()


def test_no_package_imports_itself_around_a_circle() -> None:
    """Between the packages of ``bot/`` and ``adapters/``, the imports point one way."""
    modules = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for source, targets in _imports(modules).items():
        for target in targets:
            a, b = _package(source), _package(target)
            if a != b:
                edges[a].add(b)
    packages = sorted({_package(m) for m in modules})
    assert _cycles(packages, edges) == set()


def test_the_walker_finds_a_cycle_it_is_shown() -> None:
    """The check itself: a two-module circle and a self-contained chain."""
    assert _cycles(["a", "b", "c"], {"a": {"b"}, "b": {"a", "c"}}) == {frozenset({"a", "b"})}
    assert _cycles(["a", "b", "c"], {"a": {"b"}, "b": {"c"}}) == set()


def test_bot_holds_few_loose_modules() -> None:
    """``bot/`` reads like the design's boxes: its modules live in packages but a few."""
    loose = sorted(p.name for p in (ROOT / "bot").glob("*.py"))
    assert len(loose) <= MAX_LOOSE_MODULES, loose

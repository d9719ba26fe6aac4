"""The packages show the design: no import cycle, and few modules loose in ``bot/``.

The imports are read from the source (``ast``), every one of them: at module
level, inside functions and under ``TYPE_CHECKING``, since each is a
dependency of the design whether or not it runs at import time.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LOOSE_MODULES = 8


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

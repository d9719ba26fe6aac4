"""The kernel defines the model port it calls; providers implement it, never the reverse."""

from __future__ import annotations

import ast
from pathlib import Path

import bot.kernel
from bot.kernel import Provider
from bot.providers import base
from bot.providers.openai_compat import OpenAICompatibleProvider
from bot.providers.scripted import ScriptedProvider

KERNEL = Path(bot.kernel.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_nothing_in_the_kernel_imports_the_providers() -> None:
    """No module under bot/kernel imports bot.providers (or anything beneath it)."""
    modules = sorted(KERNEL.glob("*.py"))
    assert modules, "the kernel package has no modules to check"
    offenders = {
        path.name: sorted(
            m for m in _imported_modules(path) if m.split(".")[:2] == ["bot", "providers"]
        )
        for path in modules
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_providers_implement_the_kernel_port_and_the_old_address_still_works() -> None:
    """Both providers subclass the kernel's Provider; bot.providers.base re-exports it."""
    assert Provider in ScriptedProvider.__mro__
    assert Provider in OpenAICompatibleProvider.__mro__
    assert base.Provider is Provider
    assert Provider.__module__ == "bot.kernel.provider"

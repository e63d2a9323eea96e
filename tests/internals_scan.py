"""Finds uses of other packages' private or internal APIs in sitegen's source, by reading it with ast."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sitegen"
# The one module allowed to use them.
HOME = PACKAGE / "render" / "base" / "_internals.py"

# Modules of other packages that are internal though their names are not underscored, and names of
# public modules that are not part of the package's published surface.
INTERNAL_MODULES = (
    "markdown_it.rules_core",
    "markdown_it.rules_block",
    "markdown_it.rules_inline",
    "markdown_it.common",
    "jinja2.filters",
    "re._parser",
    "re._constants",
    "sre_parse",
    "sre_constants",
    "sre_compile",
)
INTERNAL_NAMES = {("pygments.lexers", "LEXERS")}
# Reading another function's closure is reading its implementation.
REFLECTION = {"__closure__", "cell_contents", "co_freevars"}
# Names with a leading underscore that are documented public API: os._exit (exit without cleanup,
# in a forked child), and a named tuple's _fields.
DOCUMENTED = {"_exit", "_fields"}

_PRIVATE = re.compile(r"_[A-Za-z0-9]\w*")


@dataclass(frozen=True)
class Use:
    path: Path
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(PACKAGE.parent)}:{self.line}: {self.what}"


def _is_private(name: str) -> bool:
    return bool(_PRIVATE.fullmatch(name)) and not (name.startswith("__") and name.endswith("__"))


def _is_internal_module(module: str) -> bool:
    if module == "sitegen" or module.startswith("sitegen."):
        return False
    if any(_is_private(part) for part in module.split(".")):
        return True
    return any(module == internal or module.startswith(internal + ".") for internal in INTERNAL_MODULES)


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def own_private_names(trees: list[ast.Module]) -> set[str]:
    """Private names sitegen defines itself: its functions, classes, variables, slots, and attributes
    it sets on self."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
            elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__slots__" for target in node.targets
            ):
                names.update(
                    item.value
                    for item in ast.walk(node.value)
                    if isinstance(item, ast.Constant) and isinstance(item.value, str)
                )
    return {name for name in names if _is_private(name)}


def uses_in(path: Path, tree: ast.Module, own: set[str]) -> Iterator[Use]:
    texts = _text_constants(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_internal_module(alias.name):
                    yield Use(path, node.lineno, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _is_internal_module(node.module):
                yield Use(path, node.lineno, f"from {node.module} import ...")
            elif not node.module.startswith("sitegen"):
                for alias in node.names:
                    if _is_private(alias.name) or (node.module, alias.name) in INTERNAL_NAMES:
                        yield Use(path, node.lineno, f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Attribute):
            if node.attr in REFLECTION:
                yield Use(path, node.lineno, f"{ast.unparse(node)} (another function's closure)")
            elif _is_private(node.attr) and node.attr not in own and node.attr not in DOCUMENTED:
                yield Use(path, node.lineno, ast.unparse(node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A module for importlib, a function's qualified name.
            if _DOTTED.fullmatch(node.value) and _is_internal_module(node.value):
                yield Use(path, node.lineno, f"{node.value!r} (a private name as text)")
        elif isinstance(node, ast.Call):
            name = _named_attribute(node, texts)
            if name is not None and _is_private(name) and name not in own and name not in DOCUMENTED:
                yield Use(path, node.lineno, f"{ast.unparse(node)} (a private attribute by name)")
        elif isinstance(node, ast.Compare) and _is_dict_of(node.comparators[0]) and isinstance(node.left, ast.Constant):
            name = node.left.value
            if isinstance(name, str) and _is_private(name) and name not in own:
                yield Use(path, node.lineno, f"{ast.unparse(node)} (a private attribute by name)")


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+")
_BY_NAME = {"getattr", "hasattr", "setattr", "delattr"}


def _is_dict_of(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


def _text_constants(tree: ast.Module) -> dict[str, str]:
    """A module's NAME = "text" constants, which getattr may be given instead of the text."""
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _named_attribute(call: ast.Call, texts: dict[str, str]) -> str | None:
    """The attribute a getattr-like call, or a lookup in a class's __dict__, names; None otherwise."""
    if isinstance(call.func, ast.Name) and call.func.id in _BY_NAME and len(call.args) >= 2:
        argument = call.args[1]
    elif (
        isinstance(call.func, ast.Attribute) and call.func.attr == "get" and _is_dict_of(call.func.value) and call.args
    ):
        argument = call.args[0]
    else:
        return None
    if argument is None:
        return None
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.Name):
        return texts.get(argument.id)
    return None


def private_uses() -> list[Use]:
    """Every use of another package's private or internal names outside sitegen/render/base/_internals.py."""
    trees = {path: _parsed(path) for path in _modules() if path != HOME}
    own = own_private_names(list(trees.values()))
    return [use for path, tree in trees.items() for use in uses_in(path, tree, own)]

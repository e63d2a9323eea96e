"""The folders are the pipeline's stages: every import inside sitegen points back along it, never forward."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sitegen"

# Stages in pipeline order; a module may import its own stage and the ones before it. A name is a
# package or module, matched by its longest prefix.
STAGES: list[tuple[str, ...]] = [
    (
        "sitegen",
        "sitegen.errors",
        "sitegen.fileio",
        "sitegen.undo",
        "sitegen.gcpause",
        "sitegen.resources",
        "sitegen.visible",
        "sitegen.jsontext",
    ),
    ("sitegen.timings", "sitegen.titles", "sitegen.clipboard"),
    ("sitegen.session",),
    ("sitegen.odek", "sitegen.history", "sitegen.redact", "sitegen.redact_rules"),
    ("sitegen.transcript",),
    ("sitegen.render.base",),
    ("sitegen.render.highlight",),
    ("sitegen.render.markdown",),
    ("sitegen.render",),
    ("sitegen.site.state",),
    ("sitegen.site.search",),
    ("sitegen.site.prompts",),
    ("sitegen.site.pages",),
    ("sitegen.site.build", "sitegen.site"),
    ("sitegen.site.live",),
    ("sitegen.share",),
    ("sitegen.cli",),
]
_RANK = {name: rank for rank, names in enumerate(STAGES) for name in names}


def stage_of(module: str) -> str:
    """The longest stage name that is the module or a package holding it."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in _RANK:
            return name
    raise AssertionError(f"{module} belongs to no stage: add it to tests/test_layers.py's STAGES")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[str]:
    """Every sitegen module the file imports (a `from package import module` names the module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("sitegen")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sitegen"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                as_path = ROOT / candidate.replace(".", "/")
                found.append(candidate if as_path.is_dir() or as_path.with_suffix(".py").is_file() else node.module)
    return found


def test_every_module_belongs_to_a_stage() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        stage_of(module_name(path))


def test_imports_point_back_along_the_pipeline() -> None:
    forward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        rank = _RANK[stage_of(importer)]
        for imported in imported_modules(path):
            if _RANK[stage_of(imported)] > rank:
                forward.append(f"{importer} ({stage_of(importer)}) imports {imported} ({stage_of(imported)})")
    assert not forward, "imports that point forward along the pipeline:\n" + "\n".join(forward)


def test_stage_packages_have_a_docstring() -> None:
    for init in sorted(PACKAGE.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{init.relative_to(ROOT)} says nothing of its stage"

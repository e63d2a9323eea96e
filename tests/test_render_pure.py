"""Rendering is pure: no module under sitegen/render/ reads a session's files; transcript/ resolves them first."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RENDER = ROOT / "sitegen" / "render"

# Packages and modules that read sessions, stores and the disk; the renderer takes a transcript instead.
FORBIDDEN_MODULES = (
    "sitegen.session",
    "sitegen.odek",
    "sitegen.history",
    "sitegen.transcript.load",  # reads session files
    "sitegen.transcript.attachments",  # reads artifacts and subagents' session files
    "sitegen.transcript.from_pi",
    "sitegen.transcript.from_odek",
    "sitegen.fileio",
    "sitegen.resources",
    "os",
    "io",
    "shutil",
    "tempfile",
    "stat",
    "glob",
    "mmap",
    "sqlite3",
    "subprocess",
    "fileinput",
    "signal",
)
# Methods that touch the file system (pathlib's, and os.DirEntry's); called on anything, they are suspect.
FORBIDDEN_METHODS = frozenset(
    {
        "read_text", "read_bytes", "write_text", "write_bytes", "open", "stat", "lstat", "exists", "is_file",
        "is_dir", "is_symlink", "iterdir", "glob", "rglob", "scandir", "listdir", "unlink", "mkdir", "touch",
        "rename", "replace_file", "samefile",
    }
)  # fmt: skip
FORBIDDEN_CALLS = frozenset({"open", "__import__", "exec", "eval"})

# What the renderer's own machinery may do, module by module. None of it reads a session: it is the
# renderer's code, templates and caches, its output, or its second process.
ALLOWED: dict[str, dict[str, str]] = {
    "sitegen.render.templates": {
        "import os": "jinja's bytecode cache: a cached template must be a regular file (os.lstat)",
        "import stat": "the same check (stat.S_ISREG)",
        "call .lstat()": "the same check, on the cache file jinja names",
        "import sitegen.fileio": "reads the bytecode cache through open_regular (never a FIFO or a link out)",
        "import sitegen.resources": "templates and static assets are the package's own files (resource_dir)",
        "call .read_text()": "a static asset's text, inlined into an exported page",
    },
    "sitegen.render.highlight.tables": {
        "import sitegen.fileio": "the lexer-table cache: read and replaced in the user's cache folder",
        "import sitegen.resources": "where that cache lives (cache_folder)",
        "call .read_bytes()": "the cache's key hashes the renderer's own modules",
    },
    "sitegen.render.base.fragments": {
        "import os": "the fragment cache's key names installed packages by their __init__ file (os.stat)",
        "call .stat()": "the same",
        "import sitegen.fileio": "the fragment cache between site builds: loaded and saved by the site's worker",
        "call .read_bytes()": "the cache's key hashes the renderer's own modules",
    },
    "sitegen.render.split": {
        "import os": "a long page's second half is rendered in a forked process (fork, waitpid, _exit)",
        "import signal": "the child is killed when the reader stops early",
        "import tempfile": "the child's half comes back through an unlinked temporary file",
    },
    "sitegen.render.page": {
        "import sitegen.fileio": "PageRenderer.write writes the page it renders to its output path (replacing)",
    },
    "sitegen.render.export": {
        "import sitegen.transcript.load": "the export command's entry: it loads the session it renders",
        "import sitegen.transcript.attachments": "and resolves what its tool outputs point at, then renders",
    },
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _forbidden(name: str) -> str | None:
    for module in FORBIDDEN_MODULES:
        if name == module or name.startswith(module + "."):
            return module
    return None


def uses(path: Path) -> set[str]:
    """What a module does that could read a file: forbidden imports, and calls of open or of file methods."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        for name in names:
            if (module := _forbidden(name)) is not None:
                found.add(f"import {module}")
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                found.add(f"call {node.func.id}()")
            elif isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_METHODS:
                found.add(f"call .{node.func.attr}()")
    return found


def test_no_module_under_render_reads_a_file_or_imports_a_reader() -> None:
    unexpected = []
    for path in sorted(RENDER.rglob("*.py")):
        module = module_name(path)
        allowed = ALLOWED.get(module, {})
        unexpected += [f"{module}: {use}" for use in sorted(uses(path) - allowed.keys())]
    assert not unexpected, "render/ must turn a transcript into HTML and read no file:\n" + "\n".join(unexpected)


def test_every_allowance_is_still_needed() -> None:
    stale = []
    for module, allowed in ALLOWED.items():
        path = ROOT / (module.replace(".", "/") + ".py")
        stale += [f"{module}: {use}" for use in sorted(allowed.keys() - uses(path))]
    assert not stale, "allowances no module needs any more (remove them):\n" + "\n".join(stale)


def test_the_scan_sees_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nfrom pathlib import Path\nfrom sitegen.session.artifacts import open_artifact\n"
        "from sitegen.odek import framing\nimport sitegen.history.store\n"
        "open('x')\nPath('y').read_text()\nPath('z').stat()\n",
        encoding="utf-8",
    )
    assert uses(sample) == {
        "import os",
        "import sitegen.session",
        "import sitegen.odek",
        "import sitegen.history",
        "call open()",
        "call .read_text()",
        "call .stat()",
    }

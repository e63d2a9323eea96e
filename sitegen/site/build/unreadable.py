"""The page of a session that can no longer be read: it says so and why, instead of the old content."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from sitegen import __version__
from sitegen.fileio import remove_tree, replace_file

__all__ = ["write_unreadable"]


def write_unreadable(site_dir: Path, assets: dict[str, str], page: str, source: str, reason: str) -> bool:
    """Replace a session's page, if it has one, by a page that says it could not be read and links
    to the problems page; its subagents' pages and big outputs go. Whether there was a page."""
    target = site_dir / page
    if not target.is_file():
        return False
    from sitegen.render.templates import template_environment

    env = template_environment()
    root = "../" * (len(PurePosixPath(page).parts) - 1)
    html = env.get_template("unreadable.html.j2").render(
        root=root, assets=assets, problem_count=0, version=__version__, source=source, reason=reason
    )
    remove_tree(target.with_suffix(""))
    replace_file(target, html)
    return True

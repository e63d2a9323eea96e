"""Pages a first build links to before it writes them: there first as a page saying so."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from sitegen import __version__
from sitegen.fileio import replace_file
from sitegen.site.pages.all_sessions import ALL_SESSIONS_PAGE

__all__ = ["INDEX_PAGES", "write_placeholders"]

# The pages every page's navigation links to; the build's index phase writes them. The home page
# last: once it is there, every placeholder is.
INDEX_PAGES = ("search.html", "prompts.html", "stats.html", "problems.html", ALL_SESSIONS_PAGE, "index.html")


def write_placeholders(site_dir: Path, assets: dict[str, str], pages: Iterable[str]) -> list[str]:
    """A "being built" page at each site-relative path of `pages` that is not there yet, in order, so
    that a first build stopped in its index phase leaves no link to a missing page (the placeholders
    themselves link to none but the stylesheets); what was written."""
    from sitegen.render.templates import template_environment

    template = template_environment().get_template("being_built.html.j2")
    written = []
    for page in pages:
        target = site_dir / page
        if target.exists():
            continue
        root = "../" * (len(PurePosixPath(page).parts) - 1)
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, template.render(root=root, assets=assets, problem_count=0, version=__version__))
        written.append(page)
    return written

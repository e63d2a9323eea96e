"""The replacements bench_design.py makes in sitegen before a build: parts of its work taken out, to measure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

__all__ = ["apply"]


def apply(variant: str) -> None:
    """Make the variant's replacements (bench_design.VARIANTS) in this process; its workers are forked
    from it, or import the same modules through this interpreter's path, and keep them only if forked:
    the build forks its workers when no thread runs, as it does on the command line."""
    if "entries as data" in variant:
        _entries_as_data()
    if "no search" in variant:
        _no_search()


def _entries_as_data() -> None:
    """Every entry of a page written as its JSON where its HTML was (the page's entries in order)."""
    import sitegen.render.page as page

    def as_data(pieces: list[str], node: Any, ctx: Any) -> None:
        # What a page that makes its entries' HTML itself would carry: the entry's model (written where
        # its HTML was, not wrapped in a script element: the bench's pages are measured, never opened).
        pieces.append(orjson.dumps(node, default=str).decode().replace("</", "<\\/"))

    vars(page)["entry_into"] = as_data  # the name page.py calls (imported there from entries.py)


def _no_search() -> None:
    """No search entries extracted or stored in the workers, and no index exported at the end."""
    import sitegen.site.build.worker as worker
    import sitegen.site.pages.site_pages as site_pages
    from sitegen.site.search.index import SearchIndexResult

    def store_nothing(site_dir: Path, key: str, transcript: object) -> None:
        return None

    def export_nothing(*args: object, meanwhile: Any = None, **kwargs: object) -> SearchIndexResult:
        if meanwhile is not None:
            meanwhile()  # the related lists and index pages, made while the index is exported
        return SearchIndexResult()

    vars(worker)["_store_search"] = store_nothing
    vars(site_pages)["update_search_index"] = export_nothing

"""The jinja environment every page is made with (bundled templates, autoescape, a safe bytecode cache),
the static assets' text, and the pages' Content-Security-Policy."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import stat

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket

from sitegen.fileio import open_regular
from sitegen.render.base._internals import template_cache_filename
from sitegen.render.base.text import escape_text
from sitegen.resources import cache_folder, resource_dir
from sitegen.visible import visible_value

__all__ = ["asset_text", "content_security_policy", "template_environment"]

log = logging.getLogger("sitegen.render")


def _bytecode_cache() -> FileSystemBytecodeCache | None:
    """Compiled templates kept in the user's cache folder: compiling them is a tenth of a small export.

    Keyed by template source, so an edited template is recompiled; without a writable folder, none."""
    folder = cache_folder("templates")
    # The key holds no environment setting: a setting compiled into the code (finalize) renames the files.
    return _TemplateCache(str(folder), "sitegen-v2-%s.cache") if folder is not None else None


class _TemplateCache(FileSystemBytecodeCache):
    """jinja's cache of compiled templates, reading only regular files: a pipe left in the folder
    would make the first read wait forever. What cannot be read is skipped, with a warning."""

    def load_bytecode(self, bucket: Bucket) -> None:
        filename = template_cache_filename(self, bucket)
        try:
            with open_regular(filename) as handle:
                bucket.load_bytecode(handle)
        except FileNotFoundError:
            return
        except OSError as error:
            log.warning("Skipping %s in the template cache: %s", filename, error.strerror or error)
        except Exception:
            bucket.reset()  # cut short or not jinja's: compiled again, and written anew

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            if not stat.S_ISREG(os.lstat(template_cache_filename(self, bucket)).st_mode):
                return  # not ours to replace (said when it was skipped)
        except FileNotFoundError:
            pass
        except OSError:
            return
        super().dump_bytecode(bucket)


def template_environment() -> Environment:
    """The jinja environment for every page: bundled templates, autoescape always on."""
    env = Environment(
        loader=FileSystemLoader(str(resource_dir("templates"))),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_bytecode_cache(),
    )
    # `| text` escapes for element content only (quotes kept, a fifth smaller for JSON); never use
    # it inside an attribute, where autoescape's full escaping is needed.
    env.filters["text"] = escape_text
    # Every value a template shows (titles, paths, names, in text and attributes) without control
    # characters or bidirectional overrides; markup stays markup.
    env.finalize = visible_value
    return env


def asset_text(name: str) -> str:
    return (resource_dir("static") / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def content_security_policy(styles: list[str] | None, scripts: list[str] | None) -> str:
    """Only what the page carries: inline code by hash, images as data: URIs, nothing fetched."""
    style = " ".join(_csp_hash(s) for s in styles) if styles is not None else "'self'"
    script = " ".join(_csp_hash(s) for s in scripts) if scripts is not None else "'self'"
    # A site page may be served by `sitegen watch`, whose reload script listens to the server;
    # a self-contained page connects nowhere.
    connect = "'none'" if scripts is not None else "'self'"
    return (
        f"default-src 'none'; img-src data:; style-src {style}; script-src {script}; "
        f"connect-src {connect}; base-uri 'none'; form-action 'none'; frame-src 'none'; object-src 'none'"
    )

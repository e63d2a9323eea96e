"""The sitegen command line: parse options, call one core function, report; errors become one line."""

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from sitegen.cli.common import (
    AgentDirOption,
    OdekDirOption,
    check_given_dirs,
    fail,
    given_agent_dirs,
    open_in_browser,
    pi_only,
    resolve_argument,
    user_errors,
)
from sitegen.cli.search import doctor_command, search_command
from sitegen.cli.stats import stats_command
from sitegen.cli.text import json_text as _json_text
from sitegen.cli.text import printable as _printable
from sitegen.cli.text import visible as _visible
from sitegen.gcpause import imports_settled

__all__ = ["app", "main"]

app = typer.Typer(
    name="sitegen",
    help="Turn coding-agent sessions (pi, omp, xcsh, odek) into HTML you can read, browse, search and share.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])

SessionArgument = Annotated[
    str | None,
    typer.Argument(
        help="A session file, or an id / file-name prefix. Default: this terminal's session, "
        "else the most recent one of the current directory.",
        show_default=False,
    ),
]


def _odek_dirs(extra: list[Path] | None) -> list[Path]:
    from sitegen.odek.store import default_odek_dirs

    return default_odek_dirs(extra or [])


NoWaitOption = Annotated[
    bool,
    typer.Option("--no-wait", help="If another build or watch is writing the site, exit 1 instead of waiting."),
]


@app.command("ls")
@user_errors
def list_command(
    all_projects: Annotated[
        bool, typer.Option("--all", help="Every project and the odek stores, not just this directory.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
) -> None:
    """List sessions, newest first."""
    from sitegen.odek.listing import odek_session_infos
    from sitegen.session.discover import list_all, list_sessions

    dirs = given_agent_dirs(agent_dir)
    infos = list_all(dirs) if all_projects else list_sessions(os.getcwd(), dirs)
    if all_projects:
        infos = sorted([*infos, *odek_session_infos(odek_dir or [])], key=lambda i: i.order)
    if as_json:
        sys.stdout.write(_json_text([_printable(i.to_json()) for i in infos]) + "\n")
        return
    if not infos:
        typer.echo("No sessions found." + ("" if all_projects else " Try --all."))
        return
    from sitegen.render.page import format_time

    for info in infos:
        title = info.display_title
        where = f"  {info.cwd}" if all_projects else ""
        line = f"{info.id[:8]}  {format_time(info.active)[:16]}  {info.message_count:>5} msgs  {title}{where}"
        typer.echo(_visible(line))


@app.command("context")
@user_errors
def context_command(
    session: SessionArgument = None,
    leaf: Annotated[str | None, typer.Option("--leaf", help="Entry id to rebuild the context at.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the context as one JSON object.")] = False,
    agent_dir: AgentDirOption = None,
) -> None:
    """Show what the model saw at a leaf (default: the last entry)."""

    from sitegen.session.context import LAST_ENTRY, build_session_context
    from sitegen.session.session import open_session

    path = resolve_argument(session, agent_dir)
    pi_only(path, "context")
    loaded = open_session(path, default_agent_dirs=given_agent_dirs(agent_dir))
    if leaf is not None and leaf not in loaded.by_id:
        raise fail(f"No entry {leaf!r} in {path}")
    context = build_session_context(
        loaded.entries, leaf if leaf is not None else LAST_ENTRY, loaded.by_id, loaded.context_rules
    )
    if as_json:
        sys.stdout.write(_json_text(context.to_json()) + "\n")
        return
    roles: dict[str, int] = {}
    for message in context.messages:
        role = str(message.get("role"))
        roles[role] = roles.get(role, 0) + 1
    lines = [
        f"Rules: {context.rules}",
        f"Leaf: {context.leaf_id}",
        f"Messages: {len(context.messages)} ({', '.join(f'{k} {v}' for k, v in roles.items())})",
        # pi keeps a file's null thinking level as null (omp reads it as "off").
        f"Thinking level: {'null' if context.thinking_level is None else context.thinking_level}",
        f"Models: {', '.join(f'{k}={v}' for k, v in context.models.items()) or 'none'}",
        f"Mode: {context.mode}",
    ]
    if context.injected_ttsr_rules:
        lines.append(f"Injected rules: {', '.join(map(str, context.injected_ttsr_rules))}")
    typer.echo(_visible("\n".join(lines)))


@app.command("migrate")
@user_errors
def migrate_command(
    session: SessionArgument = None,
    write: Annotated[bool, typer.Option("--write", help="Rewrite the file (atomically) in the new format.")] = False,
    agent_dir: AgentDirOption = None,
) -> None:
    """Report what migrating a session to the current format changes; --write applies it."""
    from sitegen.session.rewrite import migrate_file

    path = resolve_argument(session, agent_dir)
    pi_only(path, "migrate")
    report = migrate_file(path, write=write)
    if not report.changed:
        typer.echo(f"{path}: already version {report.to_version}; nothing to migrate")
        return
    typer.echo(f"{path}: version {report.from_version} -> {report.to_version} ({', '.join(report.steps)})")
    if report.ids_added:
        typer.echo(f"  {report.ids_added} entries get an id and a parent id")
    if report.compactions_relinked:
        typer.echo(f"  {report.compactions_relinked} compactions: firstKeptEntryIndex -> firstKeptEntryId")
    if report.hook_messages_renamed:
        typer.echo(f"  {report.hook_messages_renamed} hookMessage roles renamed to custom")
    typer.echo("Written." if write else "Nothing written; run with --write to rewrite the file.")


@app.command("resolve")
@user_errors
def resolve_command(
    url: Annotated[
        str, typer.Argument(help="An artifact://N or agent://ID URL (agent URLs may end in /path or ?q=...).")
    ],
    session: Annotated[str | None, typer.Option("--session", help="The session whose artifacts to use.")] = None,
    raw: Annotated[
        bool, typer.Option("--raw", help="Write control characters as they are, to a terminal too.")
    ] = False,
    agent_dir: AgentDirOption = None,
) -> None:
    """Print the content an artifact:// or agent:// URL points at (on a terminal, with its control
    characters shown as symbols; as it is to a pipe or a file)."""
    from sitegen.session.artifacts import artifacts_dir_for, resolve_internal_url

    path = resolve_argument(session, agent_dir)
    folder = artifacts_dir_for(path)
    content = resolve_internal_url(url, [folder] if folder is not None else [])
    text = content if content.endswith("\n") else content + "\n"
    # A tool's output can hold escape sequences that would drive the terminal (titles, the clipboard).
    sys.stdout.write(text if raw or not sys.stdout.isatty() else _visible(text))


@app.command("dump")
@user_errors
def dump_command(
    session: SessionArgument = None,
    copy: Annotated[bool, typer.Option("--copy", help="Copy to the clipboard instead of printing.")] = False,
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
) -> None:
    """Print the session as plain text: prompt, model, tools, messages, tool calls and results."""
    from sitegen.session.dump import format_session_as_text
    from sitegen.session.session import open_session
    from sitegen.transcript.load import family_of

    path = resolve_argument(session, agent_dir, odek_dir)
    if family_of(path) == "odek":
        from sitegen.odek.dump import format_odek_as_text

        text = format_odek_as_text(path)
    else:
        text = format_session_as_text(open_session(path, default_agent_dirs=given_agent_dirs(agent_dir)))
    if not text:
        typer.echo("No messages to dump yet")
        return
    text = _visible(text)
    if copy:
        from sitegen.clipboard import copy_to_clipboard

        tool = copy_to_clipboard(text)
        typer.echo(f"Copied to the clipboard ({tool})")
        return
    sys.stdout.write(text)


@app.command("export")
@user_errors
def export_command(
    session: SessionArgument = None,
    output: Annotated[Path | None, typer.Argument(help="Output file (default: <session file name>.html here).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output file, as OUTPUT.")] = None,
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in the browser.")] = False,
    branch: Annotated[bool, typer.Option("--branch", help="Only the default branch (smaller page).")] = False,
    redact: Annotated[bool, typer.Option("--redact", help="Replace secrets with [REDACTED:kind].")] = False,
    artifacts: Annotated[
        str,
        typer.Option(
            "--artifacts",
            metavar="budget|full|none",
            help="Tool output the session points at: about 5 MB per page, the long ones by head and tail "
            "(budget); all of it (full); or only where it is (none).",
        ),
    ] = "budget",
    export_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="html|md|json",
            help="html: the page (default); md: a Markdown transcript; json: every entry as the page reads it.",
        ),
    ] = "html",
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
) -> None:
    """Write one self-contained HTML page for a session (or Markdown, or JSON, with --format)."""
    with imports_settled():
        from sitegen.render.export import export_page, load_transcript

    if export_format not in ("html", "md", "json"):
        raise typer.BadParameter(f"{export_format!r} is not one of html, md, json", param_hint="--format")
    if artifacts not in ("budget", "full", "none"):
        raise typer.BadParameter(f"{artifacts!r} is not one of budget, full, none", param_hint="--artifacts")
    if output is not None and out is not None and output != out:
        raise typer.BadParameter("give the output file once, as OUTPUT or as --out", param_hint="--out")
    output = output if output is not None else out
    path = resolve_argument(session, agent_dir, odek_dir)
    transcript = load_transcript(path, given_agent_dirs(agent_dir))
    redactor = _redactor() if redact else None
    target = _export_target(output, path, [*given_agent_dirs(agent_dir), *_odek_dirs(odek_dir)], f".{export_format}")
    if export_format != "html":
        from sitegen.cli.export import export_text

        export_text(transcript, path, target, export_format, given_agent_dirs(agent_dir), **_filters(redactor))
        if redactor is not None:
            _report_redactions(redactor)
        typer.echo(f"Exported to: {target}")
        if open_page:
            open_in_browser(str(target))
        return
    try:
        export_page(transcript, target, branch_only=branch, parallel=True, artifacts=artifacts, **_filters(redactor))
    except OSError as error:
        # Said of the page the user named, not of the temporary file beside it that failed.
        raise fail(f"Cannot write {target}: {error.strerror or error}") from None
    if _ends_without_teardown:
        _kept_until_exit.append(transcript)
    if redactor is not None:
        _report_redactions(redactor)
    typer.echo(f"Exported to: {target}")
    if open_page:
        open_in_browser(str(target))


@app.command("build")
@user_errors
def build_command(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("site"),
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
    demo: Annotated[bool, typer.Option("--demo", help="Build from the bundled sample sessions only.")] = False,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes (default: all cores).")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any session could not be rendered.")] = False,
    open_site: Annotated[bool, typer.Option("--open", help="Open the site in the browser.")] = False,
    profile: Annotated[
        bool, typer.Option("--profile", help="Print where the time went, per phase (load, highlight, …).")
    ] = False,
    no_wait: NoWaitOption = False,
) -> None:
    """Build a static site over every session of every project (default output: ./site)."""
    with imports_settled():
        from sitegen.cli.site import BuildOptions, run_build

    if demo and (agent_dir or odek_dir):
        raise fail("--demo builds only the bundled sample sessions; leave out --agent-dir and --odek-dir")
    check_given_dirs(agent_dir, odek_dir)
    run_build(BuildOptions(out, agent_dir or [], odek_dir or [], demo, jobs, strict, open_site, profile, not no_wait))


@app.command("watch")
@user_errors
def watch_command(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to serve on (0: any free port).")] = 8000,
    host: Annotated[str, typer.Option("--host", help="Address to serve on (loopback by default).")] = "127.0.0.1",
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("site"),
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
    demo: Annotated[bool, typer.Option("--demo", help="Serve the bundled sample sessions.")] = False,
    open_site: Annotated[bool, typer.Option("--open", help="Open the site in the browser.")] = False,
    no_wait: NoWaitOption = False,
) -> None:
    """Build, serve and rebuild on every change; open pages reload themselves (Ctrl-C stops)."""
    with imports_settled():
        from sitegen.cli.site import BuildOptions, run_watch

    check_given_dirs(agent_dir, odek_dir)
    options = BuildOptions(out, agent_dir or [], odek_dir or [], demo, open_site=open_site, wait=not no_wait)
    run_watch(options, host, port)


@app.command("history")
@user_errors
def history_command(
    query: Annotated[
        list[str] | None,
        typer.Argument(help="Words every prompt shown must contain (case-insensitive, any order).", show_default=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line, one per prompt.")] = False,
    project: Annotated[
        Path | None, typer.Option("--project", help="Only prompts typed in this folder or below it.")
    ] = None,
    agent_dir: AgentDirOption = None,
) -> None:
    """Print the prompts you typed (omp and xcsh keep them in history.db), newest first."""
    from sitegen.cli.history import print_history

    check_given_dirs(agent_dir, None)
    if not print_history(" ".join(query or []), given_agent_dirs(agent_dir), project=project, as_json=as_json):
        raise typer.Exit(1)


# Its own module, so that commands added beside it merge without touching each other.
app.command("stats")(user_errors(stats_command))
app.command("search")(search_command)
app.command("doctor")(doctor_command)


def _export_target(output: Path | None, session: Path, inputs: list[Path], suffix: str = ".html") -> Path:
    """Where the export goes: OUTPUT, <stem><suffix> inside OUTPUT when it is a folder, or here; never
    where `build --out` would refuse (sitegen.session.output_guard), nor into the session's artifacts."""
    from sitegen.session.output_guard import check_output_place

    if output is None:
        target = Path.cwd() / f"{session.stem}{suffix}"
    elif output.is_dir():
        # The folder it goes into is asked first: `-o /` or `-o ~` would spread files there.
        check_output_place(output, inputs, [session])
        target = output / f"{session.stem}{suffix}"
    else:
        target = output
    check_output_place(target, inputs, [session])
    if suffix != ".html":
        from sitegen.cli.export import refused_text_target

        refusal = refused_text_target(target, session)
        if refusal is not None:
            raise fail(refusal)
    if target.exists() and not target.is_file():
        raise fail(f"Output {target} exists and is not a regular file")
    blocking = next((folder for folder in target.parents if folder.exists() and not folder.is_dir()), None)
    if blocking is not None:
        raise fail(f"Cannot write {target}: {blocking} is not a folder")
    artifacts = session.resolve().with_suffix("")
    if artifacts in target.resolve().parents:
        raise fail(f"Refusing to write the page into the session's artifacts folder: {target}")
    return target


def _redactor() -> Any:
    from sitegen.redact import Redactor  # its patterns take a while to compile: only when redacting

    return Redactor()


def _filters(redactor: Any) -> dict[str, Any]:
    """export_html's text and value filters for a redactor (none without one)."""
    if redactor is None:
        return {}
    from sitegen.redact import redact_value

    return {"text_filter": redactor.redact, "value_filter": lambda value: redact_value(value, redactor)}


def _report_redactions(redactor: Any) -> None:
    from sitegen.redact import describe_counts

    if redactor.total:
        typer.echo(f"Redacted {redactor.total} secrets: {describe_counts(redactor.counts)}")
    else:
        typer.echo("No secrets found to redact")


@app.command("share")
@user_errors
def share_command(
    session: SessionArgument = None,
    handler: Annotated[
        Path | None, typer.Option("--handler", help="A share.py whose share(html_path) publishes the page.")
    ] = None,
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Do not replace secrets before sharing.")] = False,
    branch: Annotated[bool, typer.Option("--branch", help="Share only the shown branch (smaller page).")] = False,
    public: Annotated[bool, typer.Option("--public", help="Make the gist public (default: secret).")] = False,
    open_page: Annotated[bool, typer.Option("--open", help="Open the shared link in the browser.")] = False,
    agent_dir: AgentDirOption = None,
    odek_dir: OdekDirOption = None,
) -> None:
    """Share a session page through your share.py handler, or else as a secret GitHub gist."""
    from sitegen.errors import ShareCancelled
    from sitegen.redact import Redactor

    with imports_settled():
        from sitegen.render.export import export_page, load_transcript
    from sitegen.share import gist_title, share_session, size_warning

    path = resolve_argument(session, agent_dir, odek_dir)
    dirs = given_agent_dirs(agent_dir)
    transcript = load_transcript(path, dirs)
    redactor = None if no_redact else Redactor()
    # Its own redactor: the title's secrets are copies of the first message's, counted on the page.
    title = gist_title(transcript, None if redactor is None else Redactor().redact)

    def export(target: Path) -> None:
        export_page(transcript, target, branch_only=branch, parallel=True, **_filters(redactor))

    own_dir = next((p.parent for p in path.parents if p.name == "sessions"), None)
    agent_dirs = [own_dir, *dirs] if own_dir is not None else dirs
    try:
        outcome = share_session(export, title=title, agent_dirs=agent_dirs, handler=handler, public=public)
    except ShareCancelled:
        raise fail("Share cancelled", 130) from None
    if outcome.message:
        typer.echo(outcome.message)
    if outcome.via == "gist":
        typer.echo(f"Preview: {outcome.preview_url}")
        typer.echo(f"Gist: {outcome.gist_url}")
        warning = size_warning(outcome.page_bytes, branch=branch)
        if warning:
            typer.echo(warning, err=True)
    elif outcome.url:
        typer.echo(outcome.url)
    if redactor is not None:
        _report_redactions(redactor)
    if open_page and outcome.url:
        open_in_browser(outcome.url)


class _WarningSummary(logging.Handler):
    """Warnings from the core, one line each, except repeats of a kind (missing blobs), which are
    counted and summed up at exit so a session with 500 missing images prints 2 lines, not 500."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.repeats: dict[str, list[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        # A warning can quote the session (an entry id, a path), so its controls are shown, not obeyed.
        message = _visible(record.getMessage())
        if record.name == "sitegen.blobs":
            self.repeats.setdefault("missing or unreadable image blobs", []).append(message)
            return
        typer.echo(f"warning: {message}", err=True)

    def summary(self) -> None:
        for kind, messages in self.repeats.items():
            typer.echo(f"warning: {len(messages)} {kind}, e.g. {messages[0]}", err=True)


# What a command has finished with but need not free, when main() ends the process without the
# interpreter's teardown (_exit_now: build and export run from the command line, not in a test's
# process): a 50 MB session's transcript took 40 ms to free when the command returned.
_ends_without_teardown = False
_kept_until_exit: list[object] = []


def _exit_now(done: SystemExit) -> NoReturn:
    """End the process as `done` would, but without the interpreter's teardown: freeing a build's
    heap object by object takes longer than a small rebuild itself. Every file the build wrote is
    closed by now; only the standard streams and logging still hold buffered output."""
    code = done.code
    if not (code is None or isinstance(code, int)):
        print(code, file=sys.stderr)
        code = 1
    logging.shutdown()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = code or 120  # what Python exits with when it cannot flush its streams
    os._exit(code or 0)


# Commands kept in modules of their own register themselves on app when imported.


def main() -> None:
    """Console entry point."""
    summary = _WarningSummary()
    root = logging.getLogger("sitegen")
    root.addHandler(summary)
    root.propagate = False
    global _ends_without_teardown
    # Only build and export (whose second process is waited for before it returns): other commands
    # may leave threads or child processes that a normal exit waits for. A 50 MB export's heap took
    # 0.3 s to free.
    _ends_without_teardown = sys.argv[1:2] in (["build"], ["export"])
    try:
        app()
    except SystemExit as done:
        if _ends_without_teardown:
            summary.summary()
            _exit_now(done)
        raise
    finally:
        summary.summary()

"""What every ``starweave`` command shares: one-line errors, configuration warnings, option checks.

A usage or configuration error is one line on stderr and exit code 2, never a traceback or a box:
a script (or a person) should be able to read what is wrong and what to do from that one line.
The checks here look at an option's value before anything starts, so a bad port, URL, folder or
log level is reported at once, not as a failure minutes later.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import sys
import warnings
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn, TextIO, TypeVar
from urllib.parse import urlsplit

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from starweave.config.keys import ConfigWarning
from starweave.errors import ConfigError, StarweaveError
from starweave.interrupts import INTERRUPTED_EXIT, shutting_down
from starweave.text import unencodable_problem

USAGE_EXIT = 2
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def one_line(message: str) -> str:
    """``message`` folded onto one line (a multi-line message keeps its parts, joined by ``; ``)."""
    return "; ".join(part.strip() for part in str(message).splitlines() if part.strip())


def usage_error_line(exc: Exception) -> str:
    """A click/typer usage error as one line, pointing at the command's ``--help``."""
    format_message = getattr(exc, "format_message", None)
    message = one_line(format_message() if callable(format_message) else str(exc))
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        message += f" (see: {ctx.command_path} --help)"
    return message


def undecodable_argument(argv: list[str]) -> str | None:
    """The usage error for the first argument that is not UTF-8 text, or None.

    Python hands bytes that are not UTF-8 over as lone surrogates (surrogateescape); no config file,
    log, JSON document or peer can take those later, so they are refused before anything starts.
    """
    for index, arg in enumerate(argv, 1):
        if unencodable_problem(arg, "the argument") is not None:
            # By position only: the value may be a key (--api-key), and it cannot be printed anyway.
            return f"argument {index} is not valid UTF-8 text (Starweave takes UTF-8 only)"
    return None


def validation_line(exc: ValidationError) -> str:
    """A pydantic validation error of command-line values as one line: ``field: problem; ...``."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "value"
        parts.append(f"{field}: {str(error['msg']).removeprefix('Value error, ')}")
    return "; ".join(parts)


def os_error_line(exc: OSError) -> str:
    """An operating-system error (a file or folder that cannot be used) as one line."""
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def print_config_warnings(stream: TextIO | None = None) -> None:
    """Show :class:`ConfigWarning`s as ``warning: file: KEY ...`` lines; other warnings as before."""
    original = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, ConfigWarning):
            print(f"warning: {message}", file=stream or sys.stderr, flush=True)
        else:
            original(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def log_level(value: str) -> int:
    """The ``logging`` level named by ``--log-level``; a ConfigError naming the choices otherwise."""
    name = value.strip().upper()
    if name not in LOG_LEVELS:
        raise ConfigError(f"--log-level {value!r} is not a log level; use one of {', '.join(LOG_LEVELS)}")
    return int(getattr(logging, name))


def check_port(port: int, option: str = "--port") -> None:
    """A TCP port number: 0 (the OS picks one) to 65535."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"{option} {port} is not a TCP port; use 1-65535 (or 0 to pick a free one)")


def bind_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (checked by binding a socket), or None."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        return f"--host {host!r} is not an address of this machine ({getattr(exc, 'strerror', None) or exc})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        # As uvicorn binds: a port left in TIME_WAIT by a previous server is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is already in use; stop the program that holds it "
                    "or pass --port with another port (0 picks a free one)"
                )
            if exc.errno == errno.EACCES:
                return f"port {port} needs administrator rights to listen on; use a port above 1023"
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"--host {host} is not an address of this machine"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def check_bind(host: str, port: int) -> None:
    """Fail early, in one line, when ``host:port`` cannot be listened on (port 0 always can)."""
    check_port(port)
    problem = bind_problem(host, port)
    if problem:
        raise ConfigError(problem)


def check_ws_url(url: str, option: str = "--ws-server") -> None:
    """A WebSocket URL the client can connect to: ``ws://`` or ``wss://``, a host, a valid port."""
    hint = f"{option} {url!r} is not a WebSocket URL; use ws://HOST:PORT/ws (or wss://...)"
    if not url or any(ch.isspace() for ch in url):
        raise ConfigError(hint)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ConfigError(hint + " with a port from 1 to 65535") from None
    if parts.scheme not in ("ws", "wss"):
        scheme = f"the scheme {parts.scheme!r} is not ws or wss" if parts.scheme else "no ws:// or wss://"
        raise ConfigError(f"{hint} ({scheme})")
    if not parts.hostname:
        raise ConfigError(hint + " (no host)")
    if port == 0:
        raise ConfigError(hint + " with a port from 1 to 65535")


def config_dir_problem(value: Path) -> str | None:
    """Why ``value`` is not a configuration folder (one that holds ``ufo/``, the reference layout)."""
    folder = value.expanduser()
    if not folder.exists():
        return f"{value}: no such folder; name the folder that holds ufo/*.yaml"
    if not folder.is_dir():
        return f"{value}: not a folder; name the folder that holds ufo/*.yaml"
    if not (folder / "ufo").is_dir():
        return (
            f"{value} has no ufo/ folder; name the folder that holds ufo/*.yaml "
            "(like the repository's config/, which has ufo/system.yaml)"
        )
    return None


def check_positive(value: float, option: str, allow_zero: bool = False) -> None:
    """A number of seconds, retries or devices that must be positive (or zero, where that means off)."""
    if value < 0 or (value == 0 and not allow_zero) or value != value:  # NaN is not a number of seconds
        need = "0 or more" if allow_zero else "more than 0"
        raise ConfigError(f"{option} {value:g} is out of range; it must be {need}")


def config_dir_callback(value: Path | None) -> Path | None:
    """typer callback for ``--config-dir`` (and ``$STARWEAVE_CONFIG_DIR``): a usage error when wrong."""
    if value is not None:
        problem = config_dir_problem(value)
    elif os.environ.get("STARWEAVE_CONFIG_DIR"):
        problem = config_dir_problem(Path(os.environ["STARWEAVE_CONFIG_DIR"]))
        problem = f"$STARWEAVE_CONFIG_DIR={problem}" if problem else None
    else:
        problem = None
    if problem:
        raise typer.BadParameter(problem)
    return value


# Errors, warnings and questions: stderr, so stdout carries only results (--json, --quiet).
err = Console(stderr=True, highlight=False)

ConfigDirOption = Annotated[
    Path | None,
    typer.Option(
        "--config-dir",
        callback=config_dir_callback,
        help="Folder holding ufo/*.yaml (default: ./config if it has ufo/).",
    ),
]
# Options several commands take, declared once so their flags and help read the same everywhere.
ModelOption = Annotated[str | None, typer.Option("--model", help="Model name (or GGUF path for local).")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Allow dangerous commands without asking.")]
LogLevelOption = Annotated[str, typer.Option("--log-level", help="Python log level on stderr.")]


def fail(message: str, code: int = USAGE_EXIT) -> NoReturn:
    """Print ``error: message`` as one line on stderr and exit with ``code``."""
    # Escaped, so "[...]" in a message is not taken for markup.
    err.print(f"[bold red]error:[/bold red] {escape(one_line(message))}", soft_wrap=True)
    raise typer.Exit(code)


T = TypeVar("T")


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` for a command: a StarweaveError or OSError ends it with one line and
    exit code 2, Ctrl+C with 130."""
    try:
        return asyncio.run(main)
    except StarweaveError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(os_error_line(exc))
    except KeyboardInterrupt:
        shutting_down()
        raise typer.Exit(INTERRUPTED_EXIT) from None


def host_platform() -> str:
    """This machine's platform name as AIP uses it: linux, windows, darwin."""
    import platform

    return platform.system().lower() or "linux"


def setup_logging(level: str, secrets: tuple[str | None, ...] = ()) -> None:
    """Log to stderr at ``level``; every line passes the secret filter (key shapes and ``secrets``)."""
    from starweave.server.log_redaction import install_handler_filter

    try:
        number = log_level(level)
    except StarweaveError as exc:
        fail(str(exc))
    logging.basicConfig(
        level=number,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    install_handler_filter([s for s in secrets if s])

"""The ``starweave`` commands galaxy, doctor, config show and mcp serve (registered by ``cli``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from starweave.cli_support import (
    ConfigDirOption,
    LogLevelOption,
    ModelOption,
    check_bind,
    check_port,
    err,
    fail,
    run_async,
    setup_logging,
)
from starweave.errors import StarweaveError

if TYPE_CHECKING:
    from starweave.tools.servers.http_access import HttpAccess


def galaxy(
    request: Annotated[list[str] | None, typer.Argument(help="The request (words are joined).")] = None,
    devices: Annotated[
        Path | None,
        typer.Option("--devices", help="devices.yaml (or constellation.yaml) listing the devices."),
    ] = None,
    local: Annotated[
        int, typer.Option("--local", help="Start N local Linux devices on loopback instead of --devices.")
    ] = 0,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Take requests one after another.")
    ] = False,
    provider: Annotated[
        str | None, typer.Option("--provider", help="The ConstellationAgent's model provider (as for run).")
    ] = None,
    model: ModelOption = None,
    replay_file: Annotated[
        Path | None, typer.Option("--replay-file", help="Recorded ConstellationAgent answers (replay).")
    ] = None,
    device_provider: Annotated[
        str | None,
        typer.Option("--device-provider", help="Model provider of --local devices (default: --provider)."),
    ] = None,
    device_replay_file: Annotated[
        Path | None,
        typer.Option("--device-replay-file", help="Recorded answers of the --local devices' agents."),
    ] = None,
    workspace: Annotated[
        Path, typer.Option("--workspace", help="Folder holding each --local device's workspace.")
    ] = Path("galaxy_workspace"),
    log_dir: Annotated[Path, typer.Option("--log-dir", help="Where session logs go.")] = Path("logs/galaxy"),
    task_name: Annotated[
        str | None, typer.Option("--task-name", help="Log folder name of the request.")
    ] = None,
    live: Annotated[
        bool | None, typer.Option("--live/--no-live", help="Live terminal view (default: on a terminal).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="--local devices run dangerous commands without asking.")
    ] = False,
    webui: Annotated[
        bool, typer.Option("--webui", help="Serve the Galaxy WebUI: devices, chat and the live DAG.")
    ] = False,
    host: Annotated[str, typer.Option("--host", help="WebUI bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="WebUI port (the next free one if taken).")] = 8000,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open the WebUI in a browser.")
    ] = False,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar="STARWEAVE_API_KEY", help="WebUI API key (required off loopback)."),
    ] = None,
    evaluate: Annotated[
        bool,
        typer.Option(
            "--evaluate",
            help="Judge each session with the EvaluationAgent (as EVA_SESSION: true): evaluation.log.",
        ),
    ] = False,
    config_dir: ConfigDirOption = None,
    log_level: LogLevelOption = "WARNING",
) -> None:
    """Plan a request as a task DAG and run it across devices (the ConstellationAgent and orchestrator)."""
    from starweave.galaxy.client import GalaxyOptions, run_galaxy

    setup_logging(log_level, (api_key,))
    text = " ".join(request or []).strip()
    if webui and interactive:
        fail("use either --webui or --interactive, not both")
    if not text and not interactive and not webui:
        fail('give a request, e.g. starweave galaxy "count the files in each device\'s workspace" --local 2')
    if local < 0:
        fail("--local takes a number of devices (1 or more)")
    if local and devices:
        fail("use either --devices FILE or --local N, not both")
    options = GalaxyOptions(
        requests=[text] if text else [],
        interactive=interactive,
        devices_file=devices,
        local=local,
        config_dir=config_dir,
        provider=provider,
        model=model,
        replay_file=replay_file,
        device_provider=device_provider,
        device_replay_file=device_replay_file,
        log_dir=log_dir,
        workspace=workspace,
        task_name=task_name,
        live=False if webui else live,
        yes=yes,
        evaluate=evaluate,
    )
    if webui:
        raise typer.Exit(run_async(_webui(options, host, port, api_key, not no_browser)))
    raise typer.Exit(run_async(run_galaxy(options)))


async def _webui(options: Any, host: str, port: int, api_key: str | None, open_browser: bool) -> int:
    """``galaxy --webui``: off loopback without a key, one is made up and printed (as ``server`` does)."""
    import secrets

    from starweave.galaxy.webui.launch import run_webui
    from starweave.server.settings import is_loopback

    check_port(port)
    if not is_loopback(host) and not api_key:
        api_key = secrets.token_urlsafe(32)
        err.print(
            "[yellow]Listening beyond loopback: open the page with #key=KEY after the URL; the key:[/yellow] "
            + api_key
        )
    return await run_webui(
        options, host, port, api_key, open_browser, say=lambda line: print(line, flush=True)
    )


def doctor(
    config_dir: ConfigDirOption = None,
    verify: Annotated[bool, typer.Option("--verify", help="Hash the embedded model file again.")] = False,
) -> None:
    """Report what is installed and configured: Python, model file, providers, sandbox."""
    from starweave.doctor import collect_report, render_report

    try:
        report = collect_report(config_dir, verify=verify)
    except StarweaveError as exc:
        fail(str(exc))
    render_report(report, Console(highlight=False))


def config_show(
    config_dir: ConfigDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of YAML.")] = False,
) -> None:
    """Print the effective configuration, secrets masked."""
    import yaml

    from starweave.config import find_config_dir, load_config, masked_dump

    try:
        folder = find_config_dir(config_dir)
        data: dict[str, Any] = masked_dump(load_config(config_dir))
    except StarweaveError as exc:
        fail(str(exc))
    source = str(folder / "ufo") if folder else "(no files: embedded defaults)"
    if as_json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(f"# effective configuration, from {source}")
        print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), end="")


def mcp_serve(
    server: Annotated[
        str,
        typer.Argument(
            help="Which server: bash (BashExecutor), files (FileExecutor) or mobile (both mobile servers)."
        ),
    ],
    transport: Annotated[
        str | None, typer.Option("--transport", help="stdio or http (streamable HTTP); mobile: http only.")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP port.")] = 8010,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Folder commands may write in.")
    ] = None,
    config_dir: ConfigDirOption = None,
    data_port: Annotated[int, typer.Option("--data-port", help="mobile: MobileDataCollector's port.")] = 8020,
    action_port: Annotated[int, typer.Option("--action-port", help="mobile: MobileExecutor's port.")] = 8021,
    serial: Annotated[
        str | None,
        typer.Option("--serial", envvar="STARWEAVE_ADB_SERIAL", help="mobile: the device (adb -s)."),
    ] = None,
    adb_path: Annotated[
        str | None, typer.Option("--adb-path", envvar="STARWEAVE_ADB_PATH", help="mobile: the adb program.")
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option("--allow-remote", help="HTTP: allow a non-loopback --host (a key is then required)."),
    ] = False,
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            envvar="STARWEAVE_MCP_KEY",
            show_envvar=True,
            help="HTTP: require 'Authorization: Bearer KEY' on every request (required off loopback).",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host", help="HTTP off loopback: another Host name clients may use (repeatable)."
        ),
    ] = None,
) -> None:
    """Serve a Starweave MCP server over stdio or streamable HTTP."""
    from starweave.tools.servers import serve_named
    from starweave.tools.servers.http_access import http_access

    def access() -> HttpAccess:
        try:
            return http_access(host, allow_remote, key, tuple(allow_host or ()))
        except StarweaveError as exc:
            fail(str(exc))

    if server == "mobile":
        _serve_mobile(transport, host, (data_port, action_port), serial, adb_path, access)
        return
    transport = transport or "stdio"
    if transport not in ("stdio", "http"):
        fail(f"unknown transport {transport!r}; use stdio or http")
    if transport == "stdio" and (allow_remote or allow_host):
        # Not silently ignored: a user passing them believes the server is reachable and guarded.
        fail(
            "--allow-remote and --allow-host apply to --transport http only "
            "(stdio serves the program that starts it)"
        )
    guard = None
    if transport == "http":
        guard = access()
        _check_binds(host, port)
    run_async(serve_named(server, transport, host, port, workspace, config_dir, guard))


def _check_binds(host: str, *ports: int) -> None:
    try:
        for port in ports:
            check_bind(host, port)
    except StarweaveError as exc:
        fail(str(exc))


def _serve_mobile(
    transport: str | None,
    host: str,
    ports: tuple[int, int],
    serial: str | None,
    adb_path: str | None,
    access: Callable[[], HttpAccess],
) -> None:
    """Both mobile servers in one process (they share the device's caches), over HTTP."""
    from starweave.tools.mobile import Adb, find_adb
    from starweave.tools.servers.mobile import serve_mobile

    if transport not in (None, "http"):
        fail("the mobile servers run over HTTP only (two servers, one process); drop --transport")
    if ports[0] == ports[1] and ports[0] != 0:
        fail(f"--data-port and --action-port must differ (both are {ports[0]})")
    guard = access()
    _check_binds(host, *ports)
    try:
        adb = Adb(find_adb(adb_path), serial)
    except StarweaveError as exc:
        fail(str(exc))

    def announce(namespace: str, url: str) -> None:
        print(
            f"{namespace} listening on {url} (adb: {adb.path}, device: {adb.serial or 'the only one'})",
            flush=True,
        )

    run_async(serve_mobile(adb, host, ports[0], ports[1], announce=announce, access=guard))

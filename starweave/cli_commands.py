"""The ``starweave`` commands galaxy, doctor, config show and mcp serve (registered by ``cli``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from starweave.cli_support import (
    ConfigDirOption,
    LogLevelOption,
    ModelOption,
    check_bind,
    err,
    fail,
    run_async,
    setup_logging,
)
from starweave.errors import StarweaveError


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
    config_dir: ConfigDirOption = None,
    log_level: LogLevelOption = "WARNING",
) -> None:
    """Plan a request as a task DAG and run it across devices (the ConstellationAgent and orchestrator)."""
    from starweave.galaxy.client import GalaxyOptions, run_galaxy

    setup_logging(log_level)
    text = " ".join(request or []).strip()
    if not text and not interactive:
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
        live=live,
        yes=yes,
    )
    raise typer.Exit(run_async(run_galaxy(options)))


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
    server: Annotated[str, typer.Argument(help="Which server: bash (BashExecutor) or files (FileExecutor).")],
    transport: Annotated[str, typer.Option("--transport", help="stdio or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP port.")] = 8010,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Folder commands may write in.")
    ] = None,
    config_dir: ConfigDirOption = None,
) -> None:
    """Serve a Starweave MCP server over stdio or streamable HTTP."""
    from starweave.tools.servers import serve_named

    if transport not in ("stdio", "http"):
        fail(f"unknown transport {transport!r}; use stdio or http")
    if transport == "http":
        try:
            check_bind(host, port)
        except StarweaveError as exc:
            fail(str(exc))
    if transport == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        err.print(
            f"[yellow]warning:[/yellow] serving shell tools on {host}: anyone who reaches it can run commands"
        )
    run_async(serve_named(server, transport, host, port, workspace, config_dir))

"""The ``starweave`` command: run, doctor, config show, mcp."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from starweave.errors import StarweaveError

app = typer.Typer(
    help="Starweave: LLM-driven device agents that carry out requests on real machines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)
mcp_app = typer.Typer(help="Run Starweave's MCP servers on their own.", no_args_is_help=True)
app.add_typer(config_app, name="config")
app.add_typer(mcp_app, name="mcp")

err = Console(stderr=True, highlight=False)

ConfigDirOption = Annotated[
    Path | None,
    typer.Option("--config-dir", help="Folder holding ufo/*.yaml (default: ./config if it has ufo/)."),
]


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/bold red] {message}", soft_wrap=True)
    raise typer.Exit(code)


def host_platform() -> str:
    """This machine's platform name as AIP uses it: linux, windows, darwin."""
    import platform

    return platform.system().lower() or "linux"


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


@app.command()
def run(
    request: Annotated[str, typer.Argument(help="What the agent should do, in plain language.")],
    workspace: Annotated[
        Path | None,
        typer.Option("--workspace", "-w", help="Folder the agent works in (default: the current one)."),
    ] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Stop after this many steps.")] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider", help="Model provider: local, openai, ollama, aoai, azure_ad, claude, replay…"
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name (or GGUF path for local).")] = None,
    replay_file: Annotated[
        Path | None,
        typer.Option("--replay-file", help="Recorded answers for --provider replay (JSON lines)."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow dangerous commands without asking.")
    ] = False,
    config_dir: ConfigDirOption = None,
    log_dir: Annotated[
        Path | None, typer.Option("--log-dir", help="Where run logs go (default: logs/).")
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help="Name of this run's log folder.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the result.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result JSON on stdout.")] = False,
    log_level: Annotated[
        str,
        typer.Option("--log-level", help="Python log level on stderr (the console shows each step anyway)."),
    ] = "ERROR",
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="linux: the LinuxAgent (shell and files); host: the HostAgent on the desktop's windows.",
        ),
    ] = "linux",
    multi_action: Annotated[
        bool, typer.Option("--multi-action", help="--agent host: AppAgents may plan several actions a step.")
    ] = False,
    visual: Annotated[
        bool,
        typer.Option(
            "--visual", help="--agent host: send the screenshots to the model (VISUAL_MODE; a vision model)."
        ),
    ] = False,
) -> None:
    """Run an agent on this machine until the request is done (or fails): the LinuxAgent by default."""
    from starweave.session.console import ConsoleView
    from starweave.session.runner import RunOptions, run_linux_task

    if agent not in ("linux", "host"):
        _fail(f"unknown --agent {agent!r}; choose linux or host")

    _setup_logging(log_level)
    options = RunOptions(
        request=request,
        workspace=workspace,
        max_steps=max_steps,
        provider=provider,
        model=model,
        replay_file=replay_file,
        auto_approve=yes,
        config_dir=config_dir,
        log_dir=log_dir,
        task=task,
        quiet=quiet or json_output,
    )
    # With --json, stdout carries only the result; the console view (and any question) goes to stderr.
    view = ConsoleView(console=Console(stderr=json_output, highlight=False), quiet=quiet or json_output)
    try:
        if agent == "host":
            from starweave.session.desktop_runner import DesktopOptions, run_host_task

            desktop = DesktopOptions(multi_action=multi_action, visual=visual)
            result = asyncio.run(run_host_task(options, view, desktop))
        else:
            result = asyncio.run(run_linux_task(options, view=view))
    except StarweaveError as exc:
        _fail(str(exc))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]")
        raise typer.Exit(130) from None
    if json_output:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    elif quiet:
        print(result.get("result", ""))
    raise typer.Exit(0 if result.get("status") == "FINISH" else 1)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


@app.command()
def server(
    host: Annotated[str, typer.Option("--host", help="Bind address (default loopback only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port (0: pick a free one).")] = 5000,
    platform: Annotated[
        str | None,
        typer.Option("--platform", help="Device platform the sessions are for (default: this OS)."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="STARWEAVE_API_KEY",
            help="Key clients send as X-API-Key or ?token=; required beyond loopback (generated if missing).",
        ),
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="Only accept connections from this machine.")
    ] = False,
    allow_host: Annotated[
        list[str] | None, typer.Option("--allow-host", help="Extra Host header value to accept (repeatable).")
    ] = None,
    allow_origin: Annotated[
        list[str] | None, typer.Option("--allow-origin", help="Browser Origin to accept (repeatable).")
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider", help="Model provider, as for run.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model name (or GGUF path for local).")] = None,
    replay_file: Annotated[
        Path | None, typer.Option("--replay-file", help="Recorded answers (each session replays the file).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow dangerous commands without asking.")
    ] = False,
    config_dir: ConfigDirOption = None,
    log_dir: Annotated[
        Path | None, typer.Option("--log-dir", help="Where session logs go (default: logs/).")
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="Python log level on stderr.")] = "WARNING",
) -> None:
    """Run the agent server: device agents reason here, their commands run on device clients."""
    import secrets

    from starweave.server.app import serve
    from starweave.server.settings import ServerSettings
    from starweave.session.service import LinuxServiceSessionFactory, service_config

    _setup_logging(log_level)
    if local and host not in LOOPBACK:
        _fail(f"--local serves this machine only; it cannot be combined with --host {host}")
    if host not in LOOPBACK and not api_key:
        api_key = secrets.token_urlsafe(32)
        err.print(f"[yellow]Listening beyond loopback: clients must send this API key:[/yellow] {api_key}")
    try:
        config = service_config(config_dir, provider, model, replay_file, log_dir)
        settings = ServerSettings(
            host=host,
            port=port,
            platform=platform or host_platform(),
            api_key=api_key,
            require_key_on_loopback=bool(api_key),
            allowed_hosts=list(allow_host or []),
            allowed_origins=list(allow_origin or []),
            log_level=log_level.lower(),
        )
        settings.validate_security()
        factory = LinuxServiceSessionFactory(config, auto_approve=yes)

        async def main() -> None:
            try:
                await serve(settings, factory)
            finally:
                await factory.aclose()

        asyncio.run(main())
    except StarweaveError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


@app.command()
def client(
    ws: Annotated[
        bool, typer.Option("--ws", help="WebSocket mode (the only mode; accepted for compatibility).")
    ] = True,
    ws_server: Annotated[
        str, typer.Option("--ws-server", help="The agent server's AIP endpoint.")
    ] = "ws://127.0.0.1:5000/ws",
    client_id: Annotated[str, typer.Option("--client-id", help="This device's unique id.")] = "client_001",
    platform: Annotated[str | None, typer.Option("--platform", help="linux (default: this OS).")] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", envvar="STARWEAVE_API_KEY", help="The server's API key.")
    ] = None,
    workspace: Annotated[
        Path | None,
        typer.Option("--workspace", "-w", help="Folder commands run and write in (default: current)."),
    ] = None,
    max_retries: Annotated[
        int, typer.Option("--max-retries", help="Reconnection attempts before giving up.")
    ] = 5,
    heartbeat_interval: Annotated[
        float, typer.Option("--heartbeat-interval", help="Seconds between heartbeats.")
    ] = 30.0,
    duplicate_wait: Annotated[
        float,
        typer.Option(
            "--duplicate-wait",
            help="Keep retrying this long while the server still holds a stale connection with this id.",
        ),
    ] = 120.0,
    config_dir: ConfigDirOption = None,
    log_level: Annotated[str, typer.Option("--log-level", help="Python log level on stderr.")] = "WARNING",
) -> None:
    """Run a device client: register with the server and execute the commands it sends."""
    from starweave.client.runner import ClientOptions, run_device_client

    _setup_logging(log_level)
    if not ws:
        _fail("only WebSocket mode exists: pass --ws")
    options = ClientOptions(
        ws_url=ws_server,
        client_id=client_id,
        platform=platform or host_platform(),
        api_key=api_key,
        workspace=workspace,
        config_dir=config_dir,
        max_retries=max_retries,
        heartbeat_interval=heartbeat_interval,
        duplicate_wait=duplicate_wait,
    )
    try:
        code = asyncio.run(run_device_client(options))
    except StarweaveError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    raise typer.Exit(code)


@app.command()
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
    model: Annotated[str | None, typer.Option("--model", help="Model name (or GGUF path for local).")] = None,
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
    log_level: Annotated[str, typer.Option("--log-level", help="Python log level on stderr.")] = "WARNING",
) -> None:
    """Plan a request as a task DAG and run it across devices (the ConstellationAgent and orchestrator)."""
    from starweave.galaxy.client import GalaxyOptions, run_galaxy

    _setup_logging(log_level)
    text = " ".join(request or []).strip()
    if not text and not interactive:
        _fail('give a request, e.g. starweave galaxy "count the files in each device\'s workspace" --local 2')
    if local < 0:
        _fail("--local takes a number of devices (1 or more)")
    if local and devices:
        _fail("use either --devices FILE or --local N, not both")
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
    try:
        code = asyncio.run(run_galaxy(options))
    except StarweaveError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    raise typer.Exit(code)


@app.command()
def doctor(
    config_dir: ConfigDirOption = None,
    verify: Annotated[bool, typer.Option("--verify", help="Hash the embedded model file again.")] = False,
) -> None:
    """Report what is installed and configured: Python, model file, providers, sandbox."""
    from starweave.doctor import collect_report, render_report

    try:
        report = collect_report(config_dir, verify=verify)
    except StarweaveError as exc:
        _fail(str(exc))
    render_report(report, Console(highlight=False))


@config_app.command("show")
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
        _fail(str(exc))
    source = str(folder / "ufo") if folder else "(no files: embedded defaults)"
    if as_json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(f"# effective configuration, from {source}")
        print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), end="")


@mcp_app.command("serve")
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
        _fail(f"unknown transport {transport!r}; use stdio or http")
    if transport == "http" and host not in ("127.0.0.1", "localhost", "::1"):
        err.print(
            f"[yellow]warning:[/yellow] serving shell tools on {host}: anyone who reaches it can run commands"
        )
    try:
        asyncio.run(serve_named(server, transport, host, port, workspace, config_dir))
    except StarweaveError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()

"""The ``starweave`` command: run, server and client here; galaxy, doctor, config show and mcp serve
in :mod:`starweave.cli_commands`, learn in
:mod:`starweave.cli_learn`. Usage errors are one line and exit code 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import click
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from starweave.cli_agents import AgentExtras, agent_task, check_agent_options
from starweave.cli_commands import config_show, doctor, galaxy, mcp_serve
from starweave.cli_learn import learn_app
from starweave.cli_support import (
    USAGE_EXIT,
    ConfigDirOption,
    LogLevelOption,
    ModelOption,
    YesOption,
    check_bind,
    check_positive,
    check_ws_url,
    err,
    host_platform,
    print_config_warnings,
    run_async,
    undecodable_argument,
    usage_error_line,
    validation_line,
)
from starweave.cli_support import fail as _fail
from starweave.cli_support import setup_logging as _setup_logging
from starweave.errors import StarweaveError
from starweave.interrupts import INTERRUPTED_EXIT, exit_interrupted
from starweave.server.validation import device_id_problem

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
app.add_typer(learn_app, name="learn")


@app.command()
def run(
    request: Annotated[
        str | None,
        typer.Argument(help="What the agent should do, in plain language (none with --plan)."),
    ] = None,
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
    model: ModelOption = None,
    replay_file: Annotated[
        Path | None,
        typer.Option("--replay-file", help="Recorded answers for --provider replay (JSON lines)."),
    ] = None,
    yes: YesOption = False,
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
            help="linux: the LinuxAgent (shell and files); host: the HostAgent on the desktop's windows; "
            "mobile: the MobileAgent on an Android device (adb).",
        ),
    ] = "linux",
    serial: Annotated[
        str, typer.Option("--serial", help="--agent mobile: the device's serial, as `adb devices` lists it.")
    ] = "",
    adb_path: Annotated[str, typer.Option("--adb-path", help="--agent mobile: the adb program to use.")] = "",
    multi_action: Annotated[
        bool, typer.Option("--multi-action", help="--agent host: AppAgents may plan several actions a step.")
    ] = False,
    visual: Annotated[
        bool,
        typer.Option(
            "--visual",
            help="--agent host/mobile: send the screenshots to the model (VISUAL_MODE; a vision model).",
        ),
    ] = False,
    evaluate: Annotated[
        bool,
        typer.Option(
            "--evaluate",
            help="Judge the finished run with the EvaluationAgent (as EVA_SESSION: true): evaluation.log.",
        ),
    ] = False,
    save_experience: Annotated[
        bool,
        typer.Option(
            "--save-experience", help="Save the run, if it FINISHes, as experience for later requests."
        ),
    ] = False,
    no_ask: Annotated[
        bool,
        typer.Option(
            "--no-ask",
            help=(
                "Never ask on the terminal: questions (ASK_QUESTION) go unanswered, no follow-up rounds, "
                "dangerous commands are refused unless --yes."
            ),
        ),
    ] = False,
    mode: Annotated[
        str,
        typer.Option("--mode", help="normal; batch_normal: run plans' tasks; follower: follow plans' steps."),
    ] = "normal",
    plan: Annotated[
        Path | None,
        typer.Option("--plan", help="--mode batch_normal/follower: a plan file (JSON) or a folder of them."),
    ] = None,
) -> None:
    """Run an agent on this machine until the request is done (or fails): the LinuxAgent by default."""
    from starweave.session.console import ConsoleView
    from starweave.session.plans import check_mode
    from starweave.session.runner import RunOptions

    try:
        check_agent_options(agent, plan, serial, adb_path)
        run_mode = check_mode(mode, plan, request, agent)
    except StarweaveError as exc:
        _fail(str(exc))

    _setup_logging(log_level)
    options = RunOptions(
        request=request or "",
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
        evaluate=evaluate,
        save_experience=save_experience,
    )
    # With --json, stdout carries only the result; the console view (and any question) goes to stderr.
    view = ConsoleView(
        console=Console(stderr=json_output, highlight=False), quiet=quiet or json_output, ask=not no_ask
    )
    if plan is not None:
        from starweave.session.batch import BatchRequest, run_batch
        from starweave.session.desktop_runner import DesktopOptions

        batch = BatchRequest(run_mode, plan, agent, DesktopOptions(multi_action=multi_action, visual=visual))
        summary = run_async(run_batch(options, view, batch))
        if json_output:
            print(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
        raise typer.Exit(0 if summary["status"] == "FINISH" else 1)
    main = agent_task(agent, options, view, AgentExtras(multi_action, visual, serial, adb_path))
    # On Ctrl+C (exit 130) a run that has its log folder has written result.json and output.md and said so.
    result = run_async(main)
    if json_output:
        print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    elif quiet:
        print(result.get("result", ""))
    raise typer.Exit(0 if result.get("status") == "FINISH" else 1)


@app.command()
def server(
    host: Annotated[str, typer.Option("--host", help="Bind address (default loopback only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port (0: pick a free one).")] = 5000,
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            help="Platform of devices that register without one: linux, linux-desktop, windows "
            "(default: this OS; each device's own --platform picks its agent).",
        ),
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
    model: ModelOption = None,
    replay_file: Annotated[
        Path | None, typer.Option("--replay-file", help="Recorded answers (each session replays the file).")
    ] = None,
    yes: YesOption = False,
    config_dir: ConfigDirOption = None,
    log_dir: Annotated[
        Path | None, typer.Option("--log-dir", help="Where session logs go (default: logs/).")
    ] = None,
    log_level: LogLevelOption = "WARNING",
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--state-dir",
            help="Where device-id bindings (hashed device tokens) are kept "
            "(default: ~/.local/state/starweave/server/HOST_PORT; memory only with --port 0).",
        ),
    ] = None,
    device_tokens: Annotated[
        Path | None,
        typer.Option("--device-tokens", help="YAML file of 'device_id: token' lines binding those ids."),
    ] = None,
    forget_device: Annotated[
        list[str] | None,
        typer.Option("--forget-device", help="Unbind this device id (it lost its token) before serving."),
    ] = None,
) -> None:
    """Run the agent server: device agents reason here, their commands run on device clients.

    Each device id is bound to a token of its own, issued at its first registration (the client
    keeps it); a bound id cannot be taken by another client holding only the shared API key.
    """
    import secrets

    from starweave.server.app import serve
    from starweave.server.credentials import DeviceCredentials, credentials_file_for, load_device_tokens
    from starweave.server.settings import ServerSettings, is_loopback
    from starweave.session.service import ServiceSessionFactory, refusal, service_config

    _setup_logging(log_level)
    if platform is not None and (refused := refusal(platform)):
        _fail(f"--platform: {refused}")
    if local and not is_loopback(host):
        _fail(f"--local serves this machine only; it cannot be combined with --host {host}")
    try:
        check_bind(host, port)
    except StarweaveError as exc:
        _fail(str(exc))
    publish_key = False
    if not api_key and not is_loopback(host):
        api_key = secrets.token_urlsafe(32)
        err.print(f"[yellow]Listening beyond loopback: clients must send this API key:[/yellow] {api_key}")
    elif not api_key:
        # Loopback is not a user boundary: a key made up now, kept in a file only this user reads.
        api_key, publish_key = secrets.token_urlsafe(32), True

    async def main() -> None:
        config = service_config(config_dir, provider, model, replay_file, log_dir)
        try:
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
        except ValidationError as exc:
            _fail(validation_line(exc))
        settings.validate_security()
        _setup_logging(log_level, (api_key,))
        credentials = DeviceCredentials(
            credentials_file_for(host, port, state_dir),
            load_device_tokens(device_tokens) if device_tokens is not None else {},
        )
        for device_id in forget_device or []:
            if not credentials.forget(device_id):
                err.print(f"[yellow]warning:[/yellow] --forget-device {escape(device_id)}: not bound")
        factory = ServiceSessionFactory(config, auto_approve=yes, secrets=(api_key or "",))
        try:
            await serve(settings, factory, credentials, publish_key=publish_key)
        finally:
            await factory.aclose()

    # Set-up and serving in one event loop, so every error ends the command the same way.
    run_async(main())


@app.command()
def client(
    ws: Annotated[
        bool, typer.Option("--ws", help="WebSocket mode (the only mode; accepted for compatibility).")
    ] = True,
    ws_server: Annotated[
        str, typer.Option("--ws-server", help="The agent server's AIP endpoint.")
    ] = "ws://127.0.0.1:5000/ws",
    client_id: Annotated[str, typer.Option("--client-id", help="This device's unique id.")] = "client_001",
    platform: Annotated[
        str | None,
        typer.Option(
            "--platform",
            help="Device kind: linux (shell), linux-desktop (GUI apps, needs DISPLAY), windows "
            "(UI Automation), mobile (an Android phone over adb) (default: this OS).",
        ),
    ] = None,
    serial: Annotated[
        str,
        typer.Option(
            "--serial",
            help="--platform mobile: the phone's serial, as `adb devices` lists it "
            "(default: $STARWEAVE_ADB_SERIAL, else the only attached phone).",
        ),
    ] = "",
    adb_path: Annotated[
        str,
        typer.Option(
            "--adb-path",
            help="--platform mobile: the adb program (default: $STARWEAVE_ADB_PATH, else found).",
        ),
    ] = "",
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="STARWEAVE_API_KEY",
            help="The server's API key (or a device token the server's operator gave this device).",
        ),
    ] = None,
    workspace: Annotated[
        Path | None,
        typer.Option("--workspace", "-w", help="Folder commands run and write in (default: current)."),
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option(
            "--max-retries",
            help="Give up after this many failed attempts in a row (default: retry for ever).",
        ),
    ] = None,
    max_backoff: Annotated[
        float, typer.Option("--max-backoff", help="Longest wait in seconds between reconnection attempts.")
    ] = 30.0,
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--state-dir",
            help="Where the device token the server issues is kept (default: ~/.local/state/starweave).",
        ),
    ] = None,
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
    log_level: LogLevelOption = "WARNING",
) -> None:
    """Run a device client: register with the server and execute the commands it sends."""
    from starweave.client.runner import ClientOptions, run_device_client
    from starweave.config.state import state_home

    _setup_logging(log_level, (api_key,))
    if not ws:
        _fail("only WebSocket mode exists: pass --ws")
    try:
        check_ws_url(ws_server)
        problem = device_id_problem(client_id)
        if problem:
            raise StarweaveError(f"--client-id {problem}")
        check_positive(heartbeat_interval, "--heartbeat-interval")
        check_positive(duplicate_wait, "--duplicate-wait", allow_zero=True)
        check_positive(max_backoff, "--max-backoff")
        if max_retries is not None:
            check_positive(max_retries, "--max-retries", allow_zero=True)
    except StarweaveError as exc:
        _fail(str(exc))
    options = ClientOptions(
        ws_url=ws_server,
        client_id=client_id,
        platform=platform or host_platform(),
        api_key=api_key,
        # Without a key, a server of this user's on loopback: its local token (server/local_token.py).
        local_token=not api_key,
        workspace=workspace,
        config_dir=config_dir,
        max_retries=max_retries,
        max_backoff=max_backoff,
        heartbeat_interval=heartbeat_interval,
        duplicate_wait=duplicate_wait,
        state_dir=state_dir if state_dir is not None else state_home(),
        serial=serial,
        adb_path=adb_path,
    )
    raise typer.Exit(run_async(run_device_client(options)))


# galaxy, doctor, config show and mcp serve live in cli_commands, so that each module stays small.
app.command()(galaxy)
app.command()(doctor)
config_app.command("show")(config_show)
mcp_app.command("serve")(mcp_serve)


def main() -> None:
    """Console-script entry point: usage errors are one line and exit 2, Ctrl+C exits 130 (twice too)."""
    try:
        _main()
    except KeyboardInterrupt:  # outside a command's own handling (before or between its steps)
        sys.exit(INTERRUPTED_EXIT)


def _main() -> None:
    problem = undecodable_argument(sys.argv[1:])
    if problem:
        err.print(f"[bold red]error:[/bold red] {escape(problem)}", soft_wrap=True)
        sys.exit(USAGE_EXIT)
    print_config_warnings()
    try:
        code = app(prog_name="starweave", standalone_mode=False)
    except KeyboardInterrupt:  # outside any command's own handling: still 130, never by signal
        exit_interrupted(INTERRUPTED_EXIT)
    except (typer.TyperException, click.ClickException) as exc:  # typer vendors click since 0.20
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()  # type: ignore[union-attr]  # the help text, as `starweave --help` prints it
        else:
            err.print(f"[bold red]error:[/bold red] {escape(usage_error_line(exc))}", soft_wrap=True)
        sys.exit(getattr(exc, "exit_code", USAGE_EXIT))
    except (typer.Abort, click.exceptions.Abort):
        exit_interrupted(INTERRUPTED_EXIT)
    exit_interrupted(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()

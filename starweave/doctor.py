"""``starweave doctor``: what is installed and configured on this machine."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from starweave import __version__
from starweave.config import ShellConfig, find_config_dir, load_config


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def sandbox_status(shell: ShellConfig) -> dict[str, Any]:
    """What would confine the shell commands here: each sandbox's state, the choice for SHELL.SANDBOX,
    and the limits every command gets."""
    from starweave.errors import SandboxUnavailable
    from starweave.tools.sandbox import landlock
    from starweave.tools.sandbox.choice import choose_sandbox, probe_bwrap_sync, probe_landlock_sync
    from starweave.tools.sandbox.launch import memory_limit_text
    from starweave.tools.sandbox.launcher_confine import kernel_has_pidns_pid_max

    bwrap_ok, bwrap_detail = probe_bwrap_sync(shell.allow_network)
    abi = landlock.landlock_abi()
    landlock_ok, landlock_detail = probe_landlock_sync(shell.allow_network) if abi else (False, "")
    try:
        used = choose_sandbox(shell).describe()
    except SandboxUnavailable as exc:
        used = f"NONE - the shell tools refuse to start: {exc}"
    as_root = os.geteuid() == 0
    if abi:
        landlock_text = f"ABI {abi} ({', '.join(landlock.abi_features(abi))})"
        landlock_text += "" if landlock_ok else f"; does not work here: {landlock_detail}"
        if abi < landlock.USER_MIN_ABI and not as_root:
            landlock_case = f"refused: {landlock.user_abi_problem(abi)}"
        else:
            landlock_case = landlock.confinement_text(as_root)
    else:
        landlock_text = "not available (Linux 5.13+ with Landlock enabled is needed)"
        landlock_case = "-"
    if as_root:
        processes = (
            f"{shell.max_processes} (as root: the PID namespace's pid_max, at least 300)"
            if kernel_has_pidns_pid_max()
            else "not enforced as root on this kernel (needs Linux 6.14+ for a per-namespace pid_max)"
        )
    else:
        processes = str(shell.max_processes)
    return {
        "sandbox used": used,
        "setting": f"SHELL.SANDBOX: {shell.sandbox}, SHELL.MODE: {shell.mode}",
        "bubblewrap": f"works ({shutil.which('bwrap')})" if bwrap_ok else f"does not work: {bwrap_detail}",
        "Landlock": landlock_text,
        f"Landlock as {'root' if as_root else 'this user'}": landlock_case,
        "limits per command": (
            f"{memory_limit_text(shell)}, {shell.max_file_size_mb} MB per file, "
            f"{shell.max_open_files} open files, timeout {shell.timeout}s (max {shell.max_timeout}s)"
        ),
        "process limit": processes,
        "network": "allowed" if shell.allow_network else "none",
    }


def collect_report(config_dir: str | Path | None = None, verify: bool = False) -> dict[str, Any]:
    """Gather the facts; never prints. Raises ConfigError when the configuration is broken."""
    from starweave.llm.factory import provider_status
    from starweave.llm.providers.local_model import model_status

    folder = find_config_dir(config_dir)
    config = load_config(config_dir)
    return {
        "starweave": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "config": str(folder / "ufo") if folder else "none (embedded defaults)",
        "packages": {
            name: _package_version(name)
            for name in ("mcp", "openai", "anthropic", "azure-identity", "xllamacpp")
        },
        "model": model_status(verify=verify),
        "providers": provider_status(config),
        "sandbox": sandbox_status(config.system.shell),
        "bwrap": shutil.which("bwrap"),
        "shell_mode": config.system.shell.mode,
        "agent_provider": config.app_agent.api_type,
    }


def _mark(ok: Any) -> str:
    return "[green]yes[/green]" if ok else "[red]no[/red]"


def _kv_table(title: str, rows: dict[str, Any]) -> Table:
    table = Table(title=title, show_header=False)
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows.items():
        table.add_row(escape(str(key)), escape(str(value)))
    return table


def render_report(report: dict[str, Any], console: Console) -> None:
    """Print the report as tables."""
    general = {
        key: report[key]
        for key in ("starweave", "python", "platform", "config", "agent_provider", "shell_mode")
    }
    for name, version in report["packages"].items():
        general[f"package {name}"] = version or "not installed"
    console.print(_kv_table("starweave doctor", general))
    console.print(_kv_table("embedded model", report["model"]))

    providers = Table(title="providers")
    for column in ("provider", "usable", "key set", "default model", "used by", "note"):
        providers.add_column(column)
    for entry in report["providers"]:
        key_set = entry.get("key_set")
        key_text = "-" if key_set is None else _mark(key_set)
        if key_set and entry.get("key_source"):
            key_text += f" ({escape(str(entry['key_source']))})"
        providers.add_row(
            escape(str(entry.get("provider"))),
            _mark(entry.get("usable")),
            key_text,
            escape(str(entry.get("default_model", ""))),
            escape(", ".join(entry.get("used_by") or [])),
            escape(str(entry.get("detail", ""))),
        )
    console.print(providers)
    console.print(_kv_table("shell sandbox", report["sandbox"]))

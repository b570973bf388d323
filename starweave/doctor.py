"""``starweave doctor``: what is installed and configured on this machine."""

from __future__ import annotations

import asyncio
import importlib.metadata
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
    """Whether shell commands would run inside bubblewrap here, and why not."""
    from starweave.tools.servers.shell.sandbox import probe_bwrap

    works, detail = asyncio.run(probe_bwrap(shell.allow_network))
    if shell.mode == "unrestricted" or shell.sandbox == "none":
        used = f"no (SHELL.{'MODE is unrestricted' if shell.mode == 'unrestricted' else 'SANDBOX is none'})"
    elif works:
        used = "yes (bubblewrap: workspace read-write, the rest read-only, no network)"
    else:
        used = (
            "no: "
            + detail
            + (" (SHELL.SANDBOX is bwrap: commands will be refused)" if shell.sandbox == "bwrap" else "")
        )
    return {"bwrap works here": works, "sandbox used": used, "setting": shell.sandbox, "mode": shell.mode}


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

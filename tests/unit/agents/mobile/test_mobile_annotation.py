"""The MobileAgent's DATA_COLLECTION phase draws the controls' ids on the saved screenshot."""

from __future__ import annotations

import io
from pathlib import Path

from helpers.android_sim import NOTES, SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from PIL import Image

from starweave.agent import Context, ContextNames, ProcessingContext
from starweave.agents.mobile import MobileAgent, MobileProcessorContext
from starweave.agents.mobile.data_strategies import mobile_data_collection
from starweave.commands.local import LocalCommandDispatcher
from starweave.config.models import McpServerConfig, McpServerSet, ShellConfig
from starweave.tools import CommandRouter, ComputerManager, MCPServerManager
from starweave.tools.servers.mobile import MobileRegistry, mobile_state


def image(path: Path) -> Image.Image:
    """The PNG at ``path`` as RGB."""
    return Image.open(io.BytesIO(path.read_bytes())).convert("RGB")


async def test_screenshot_apps_controls_and_the_annotated_image(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    android_phone.update(screen="notes")
    registry = MobileRegistry(mobile_state(android_phone.adb_client()))
    mcp = {
        "MobileAgent": {
            "default": McpServerSet(
                data_collection=[McpServerConfig(namespace="MobileDataCollector", type="local")],
                action=[McpServerConfig(namespace="MobileExecutor", type="local")],
            )
        }
    }
    servers = MCPServerManager(ShellConfig.model_validate({"workspace": str(tmp_path)}), registry=registry)
    computers = ComputerManager(mcp, servers, tool_timeout=10)
    try:
        glob = Context()
        glob.set(ContextNames.LOG_PATH, str(tmp_path))
        glob.attach_command_dispatcher(
            LocalCommandDispatcher(CommandRouter(computers), agent_name="MobileAgent")
        )
        local = MobileProcessorContext(session_step=2)
        ctx = ProcessingContext(global_context=glob, local_context=local)
        ctx.update_local({"session_step": 2})
        result = await mobile_data_collection().execute(MobileAgent(), ctx)
    finally:
        await computers.aclose()
        await servers.aclose()
    assert result.success
    assert local.installed_apps and NOTES in local.installed_apps
    assert [c.name for c in local.current_controls or []] == [
        "Notes",
        "Note",
        "Save",
        "Delete",
        "No notes yet",
    ]
    assert set(local.annotation_dict) == {"1", "2", "3", "4", "5"}
    clean = image(tmp_path / "action_step2.png")
    annotated_path = Path(local.annotated_screenshot_path or "")
    assert annotated_path == tmp_path / "action_step2_annotated.png"
    annotated = image(annotated_path)
    # the Save button's box [60, 500, 520, 640] is outlined: its left edge changed colour; the empty
    # space below the list's label is not touched
    assert clean.getpixel((60, 570)) != annotated.getpixel((60, 570))
    assert clean.getpixel((540, 1800)) == annotated.getpixel((540, 1800))
    assert local.annotated_screenshot_url == ""  # text-only agent: not encoded for the model

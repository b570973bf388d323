"""The wire layer stands alone: importing AIP never loads the command layer above it."""

from __future__ import annotations

import subprocess
import sys


def test_importing_aip_does_not_load_the_command_layer() -> None:
    code = "import sys, starweave.aip, starweave.aip.tool_calls; print('starweave.commands' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_commands_and_aip_share_one_command_model() -> None:
    from starweave import commands
    from starweave.aip import messages

    assert commands.Command is messages.Command
    assert commands.Result is messages.Result
    assert commands.ResultStatus is messages.ResultStatus

"""Follower mode (``starweave run --agent host --mode follower``): the AppAgent follows a plan's steps
in an application the user already has open (the reference's ``FollowerSession``).

The HostAgent does not ask its model which window to use: the plan's ``object`` names it, and it is
found by title (or process name) among the desktop's windows. The host selects it, creates its
AppAgent in follower mode and starts in ASSIGN, so the round hands the plan (request and steps) to
the AppAgent; the AppAgent's FINISH (or FAIL) then ends the round (``FinishAppAgentState``).
"""

from __future__ import annotations

from pathlib import PurePath

from starweave.agent import Context
from starweave.agents.app.dispatch import run_one
from starweave.agents.app.states import FOLLOWER_MODE
from starweave.agents.host import HostAgent
from starweave.agents.host.response import HostAgentStatus
from starweave.agents.host.targets import TargetInfo, window_targets
from starweave.errors import ConfigError


def matching_window(targets: list[TargetInfo], wanted: str) -> TargetInfo | None:
    """The first window whose title (or process name) contains ``wanted``'s file name, ignoring case."""
    needle = PurePath(wanted).name.casefold().strip()
    if not needle:
        return None
    for target in targets:
        if needle in target.name.casefold() or needle == target.type.casefold():
            return target
    return None


async def start_following(host: HostAgent, context: Context, wanted: str) -> None:
    """Select the open window ``wanted`` and put ``host`` in ASSIGN with a follower-mode AppAgent for
    it; a window that is not open is a :class:`ConfigError` naming the open ones."""
    listing = await run_one(
        host.dispatcher(context),
        "get_desktop_app_info",
        {"remove_empty": True, "refresh_app_windows": True},
        "data_collection",
    )
    if not listing.ok:
        problem = listing.error or listing.result
        raise ConfigError(f"follower mode cannot list the desktop's windows: {problem}")
    targets = window_targets(listing.result)
    target = matching_window(targets, wanted)
    if target is None:
        titles = ", ".join(repr(t.name) for t in targets) or "none"
        raise ConfigError(
            f"follower mode: no open window matches the plan's object {wanted!r} (open windows: {titles}); "
            "open it first"
        )
    selected = await host.select_target(target, context)
    if not selected.ok or host.selection is None:
        raise ConfigError(f"follower mode cannot select the window {target.name!r}: {selected.error}")
    app = host.get_or_create_appagent(host.selection.root_name, host.selection.process_name)
    app.mode = FOLLOWER_MODE
    host.status = HostAgentStatus.ASSIGN.value
    host.set_state(host.state_manager.get_state(HostAgentStatus.ASSIGN.value))

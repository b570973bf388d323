"""The commands the shell policy's tables name, for tests that sweep every one of them."""

from __future__ import annotations

from starweave.tools.servers.shell.catalog import LISTINGS, LOOK_ONLY, NO_PATHS, READ_ONLY, RULE_TABLES


def known_commands() -> list[str]:
    """Every command the policy can allow: the keys of its rule tables and its plain sets, sorted."""
    names = set().union(*RULE_TABLES) | READ_ONLY | LOOK_ONLY | LISTINGS | NO_PATHS
    return sorted(names)

"""Copies of secrets under other paths: overlay writable layers, container storage, /run. (A copy of
the password database next to the workspace: tests/integration/test_sandbox_attacks.py.)"""

from __future__ import annotations

from pathlib import Path

from starweave.tools.confine.hidden import (
    CONTAINER_STORAGE,
    candidate_paths,
    overlay_layers,
    run_entries,
)

MOUNTINFO = (
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "40 1 0:50 / / rw,relatime - overlay swh-root rw,lowerdir=/,upperdir=/run/layers/upper,"
    "workdir=/run/layers/work\n"
    "41 40 0:51 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay rw,"
    "lowerdir=/var/lib/docker/overlay2/l/X:/var/lib/docker/overlay2/l/Y,"
    "upperdir=/srv/my\\040layers/diff,workdir=/srv/my\\040layers/work\n"
    "42 40 0:52 / /mnt rw - tmpfs tmpfs rw,upperdir=/not/an/overlay\n"
)


def test_the_writable_layers_of_overlay_mounts_are_found(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(MOUNTINFO)
    assert overlay_layers(str(info)) == [
        "/run/layers/upper",
        "/run/layers/work",
        "/srv/my layers/diff",
        "/srv/my layers/work",
    ]
    assert overlay_layers(str(tmp_path / "missing")) == []


def test_container_storage_and_overlay_layers_are_hidden_candidates() -> None:
    candidates = candidate_paths(homes=[])
    for tree in CONTAINER_STORAGE:
        assert tree in candidates
    for layer in overlay_layers():
        assert layer in candidates


def test_run_is_hidden_but_name_resolution(tmp_path: Path) -> None:
    for name in ("systemd", "lock", "secrets", "credentials", "docker.sock", "layers"):
        (tmp_path / name).mkdir()
    hidden = [Path(p).name for p in run_entries(str(tmp_path))]
    assert hidden == ["credentials", "docker.sock", "layers", "secrets"]

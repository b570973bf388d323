"""The folder watch keeps a walk's findings current by folder times; the machine's secret scan and
the workspace's hard links are kept current through it."""

from __future__ import annotations

import os
from pathlib import Path

from starweave.tools.confine.folder_watch import FolderWatch
from starweave.tools.confine.outside_links import OutsideLinks


def _secret(entry: os.DirEntry[str]) -> str | None:
    return entry.path if entry.name.endswith(".key") else None


def _watch(root: Path, budget: int = 10_000) -> FolderWatch[str]:
    return FolderWatch([str(root)], _secret, lambda e: e.name != "skip", budget, 30.0)


def _settle(root: Path) -> None:
    """Set every folder's time well in the past, as for folders nobody touched lately."""
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        os.utime(folder, (1_600_000_000, 1_600_000_000))


def test_a_walk_finds_what_it_picks_and_skips_what_it_must_not_enter(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "skip").mkdir()
    (tmp_path / "a" / "b" / "x.key").write_text("k")
    (tmp_path / "skip" / "y.key").write_text("k")
    (tmp_path / "plain.txt").write_text("p")
    os.symlink(tmp_path / "a", tmp_path / "link")
    watch = _watch(tmp_path)
    assert watch.complete and watch.found() == [str(tmp_path / "a" / "b" / "x.key")]


def test_a_refresh_lists_only_changed_folders_and_walks_new_trees(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _settle(tmp_path)
    watch = _watch(tmp_path)
    listed: list[str] = []
    real_list = FolderWatch._list

    def counting(self: FolderWatch[str], path: str, st: os.stat_result):  # type: ignore[no-untyped-def]
        listed.append(path)
        return real_list(self, path, st)

    monkeypatch.setattr(FolderWatch, "_list", counting)
    watch.refresh()
    assert listed == []  # nothing changed: one stat per folder, no listing
    (tmp_path / "a" / "new" / "deeper").mkdir(parents=True)
    (tmp_path / "a" / "new" / "deeper" / "late.key").write_text("k")
    watch.refresh()
    assert str(tmp_path / "a") in listed and str(tmp_path / "b") not in listed
    assert watch.found() == [str(tmp_path / "a" / "new" / "deeper" / "late.key")]


def test_a_folder_changed_in_the_tick_of_its_listing_is_listed_again(tmp_path: Path) -> None:
    watch = _watch(tmp_path)  # the folder was just made: its time is within RACY_NS of the listing
    st = os.stat(tmp_path)
    (tmp_path / "same-tick.key").write_text("k")
    os.utime(tmp_path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as a coarse clock would leave it
    watch.refresh()
    assert watch.found() == [str(tmp_path / "same-tick.key")]


def test_removed_folders_are_forgotten_and_a_budget_stops_the_walk(tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "x.key").write_text("k")
    watch = _watch(tmp_path)
    (tmp_path / "gone" / "x.key").unlink()
    (tmp_path / "gone").rmdir()
    watch.refresh()
    assert watch.found() == []
    for i in range(5):
        (tmp_path / f"d{i}").mkdir()
    assert not _watch(tmp_path, budget=2).complete
    assert _watch(tmp_path).complete


def test_hard_links_to_outside_files_are_replaced_by_copies(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (out / "target").write_text("outside\n")
    os.chmod(out / "target", 0o640)
    os.link(out / "target", ws / "hard")
    (ws / "sub").mkdir()
    (ws / "sub" / "mine").write_text("mine\n")
    os.link(ws / "sub" / "mine", ws / "sub" / "also-mine")
    links = OutsideLinks(str(ws))
    assert links.detach_outside() == [str(ws / "hard")]
    assert (ws / "hard").stat().st_nlink == 1 and (out / "target").stat().st_nlink == 1
    assert (ws / "hard").read_text() == "outside\n" and (ws / "hard").stat().st_mode & 0o777 == 0o640
    assert (ws / "sub" / "mine").stat().st_nlink == 2  # both links are in the workspace
    (ws / "hard").write_text("changed\n")
    assert (out / "target").read_text() == "outside\n"
    os.link(out / "target", ws / "sub" / "late")
    assert links.detach_outside() == [str(ws / "sub" / "late")]
    assert links.detach_outside() == []
    assert not any(p.name.startswith(".starweave-detach") for p in ws.rglob("*"))

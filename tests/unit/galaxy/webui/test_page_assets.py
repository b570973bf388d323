"""The WebUI page ships inside the package and works offline: every asset is local, referenced
under /static/, and included in the wheel's package data."""

from __future__ import annotations

import fnmatch
import mimetypes
import re
import tomllib
from pathlib import Path

import starweave

ROOT = Path(starweave.__file__).parent
STATIC = ROOT / "galaxy" / "webui" / "static"
PYPROJECT = ROOT.parent / "pyproject.toml"


def test_the_page_files_exist_and_index_links_only_local_assets() -> None:
    names = {p.name for p in STATIC.iterdir()}
    assert {"index.html", "app.js", "style.css"} <= names
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    linked = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/static/app.js" in linked and "/static/style.css" in linked
    for ref in linked:
        assert ref.startswith("/static/") or ref.startswith("data:"), ref
        if ref.startswith("/static/"):
            assert (STATIC / ref.removeprefix("/static/")).is_file(), ref


def test_the_scripts_are_served_as_javascript() -> None:
    # ES modules do not run when served as text/plain (a Windows registry default for .js).
    import starweave.galaxy.webui.app  # noqa: F401  (registers the type)

    assert mimetypes.guess_type("app.js")[0] == "text/javascript"


def test_the_scripts_import_only_local_modules() -> None:
    for script in STATIC.glob("*.js"):
        for target in re.findall(r'^import .* from "([^"]+)";$', script.read_text(encoding="utf-8"), re.M):
            assert target.startswith("./") and (STATIC / target[2:]).is_file(), (script.name, target)


def test_nothing_is_fetched_from_the_internet() -> None:
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        # The SVG namespace is an identifier, not a fetch.
        urls = [u for u in re.findall(r"https?://[^\s\"')]+", text) if u != "http://www.w3.org/2000/svg"]
        assert urls == [], (path.name, urls)
        assert "@import" not in text and "@font-face" not in text, path.name


def test_the_static_files_are_package_data() -> None:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["starweave"]
    for path in STATIC.iterdir():
        relative = path.relative_to(ROOT).as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative

"""Real-browser fixtures: Debian's headless chromium driven by selenium through chromium-driver.

``make test`` installs ``chromium`` and ``chromium-driver`` (Makefile system-deps, as root) and
``selenium`` (the [dev] extra). Without them the browser tests fail with a message naming what is
missing rather than being skipped: they are part of the suite.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# Debian's paths first; a chromium elsewhere on PATH works too.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAMES = ("chromedriver", "chromium-driver")
WINDOW = (1440, 900)


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def _driver_factory(tmp_root: Path):  # type: ignore[no-untyped-def]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: pip install -e '.[dev]' (or make test)")
    browser = _find(CHROMIUM_NAMES)
    driver_path = _find(DRIVER_NAMES)
    if browser is None or driver_path is None:
        pytest.fail(
            "chromium and chromium-driver are needed: "
            "apt-get install chromium chromium-driver (make test does it as root)"
        )

    def start():  # type: ignore[no-untyped-def]
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for arg in (
            "--headless=new",
            "--no-sandbox",  # we may run as root in a container
            "--disable-dev-shm-usage",  # /dev/shm is tiny in containers
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",  # nothing leaves the machine
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            f"--user-data-dir={tmp_root / 'profile'}",
        ):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # An explicit driver path: selenium must not try to download a driver (offline machines).
        return webdriver.Chrome(options=options, service=Service(executable_path=driver_path))

    return start


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One headless chromium for a test module (starting one costs about a second)."""
    driver = _driver_factory(tmp_path_factory.mktemp("chromium"))()
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()

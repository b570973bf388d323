"""The Galaxy WebUI in a real browser: `starweave galaxy --webui --local 2` on the replay provider,
driven through headless chromium.

One request typed in the chat becomes a three-task DAG over the two local devices; the page must
show every node turn completed, a task's result on click, the state again after a reload, and the
same events on a second page. The add-device form must refuse an invalid URL with the reference's
message. Screenshots are kept under the test's tmp dir; with STARWEAVE_SCREENSHOT_DIR set (e.g.
``docs``) the final one is also copied there as ``webui.png`` (the README's picture).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.linux_replay import answer, replay_file
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from unit.galaxy.agent.answers import NO_EDIT, line, task

pytestmark = pytest.mark.browser


DEVICES = ["local_linux_1", "local_linux_2"]
REQUEST = "Write hello on each device, then report both."
START_DEADLINE = 90  # the CLI starts two local devices and an agent server
STOP_DEADLINE = 30
WAIT = 60  # WebDriverWait deadline for anything the run has to do


WRITE = "Write hello to hello.txt."
# t1 and t2 in parallel on the two devices, then t3 once both are done.
TASKS = [task("t1", DEVICES[0], WRITE), task("t2", DEVICES[1], WRITE), task("t3", DEVICES[0], "Report.")]
LINES = [line("l1", "t1", "t3"), line("l2", "t2", "t3")]
PLAN = {
    "thought": "Write on both devices in parallel, then report.",
    "status": "CONTINUE",
    "constellation": {"tasks": TASKS, "dependencies": LINES},
}
DEVICE_RESULT = "wrote hello.txt"
# Each device task waits a moment (a real command) before it finishes, so the page can be seen
# (and photographed) while tasks run.
DEVICE_STEPS = [
    answer("sleep 1.5; echo hello > hello.txt", thought="take a moment"),
    answer(None, "FINISH", DEVICE_RESULT),
]
# The reference's colours, as the page's stylesheet draws each node's border.
GRAY, BLUE, GREEN = "rgb(138, 143, 168)", "rgb(47, 140, 255)", "rgb(46, 204, 113)"


API_KEY = "browser-test-" + secrets.token_urlsafe(16)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class WebUIProcess:
    """``starweave galaxy --webui`` in a subprocess; its output collected for failure messages."""

    def __init__(self, folder: Path, extra_env: dict[str, str] | None = None, port: int = 0) -> None:
        (folder / "planner").mkdir(parents=True)
        (folder / "devices").mkdir()
        planner = replay_file(folder / "planner", [PLAN, *[NO_EDIT] * 20])
        devices = replay_file(folder / "devices", DEVICE_STEPS)
        args = [
            *(sys.executable, "-m", "starweave.cli", "galaxy", "--webui", "--no-browser"),
            *("--local", "2", "--port", str(port or free_port()), "--host", "127.0.0.1"),
            *("--provider", "replay", "--replay-file", str(planner)),
            *("--device-provider", "replay", "--device-replay-file", str(devices)),
            *("--workspace", str(folder / "ws"), "--log-dir", str(folder / "logs"), "--yes"),
        ]
        env = dict(os.environ, PYTHONUNBUFFERED="1", NO_COLOR="1", COLUMNS="200")
        env.pop("STARWEAVE_API_KEY", None)  # the test decides whether there is a key
        env.update(extra_env or {})
        env.pop("DISPLAY", None)  # never open a browser window from the test
        self.proc = subprocess.Popen(
            args, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.output: list[str] = []
        self._url = threading.Event()
        self.url = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for text in self.proc.stdout:
            self.output.append(text)
            found = re.search(r"Galaxy WebUI: (http://\S+)", text)
            if found and not self.url:
                self.url = found.group(1).rstrip("/") + "/"
                self._url.set()
        self._url.set()  # the process ended: stop waiting

    def wait_url(self) -> str:
        if not self._url.wait(START_DEADLINE) or not self.url:
            self.stop()
            raise AssertionError("the WebUI never printed its URL:\n" + self.log())
        return self.url

    def log(self) -> str:
        return "".join(self.output)

    def stop(self) -> None:
        """Ctrl+C, as a user would; killed if it has not ended STOP_DEADLINE seconds later."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_DEADLINE)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@contextlib.contextmanager
def running_webui(
    folder: Path, extra_env: dict[str, str] | None = None, port: int = 0
) -> Iterator[WebUIProcess]:
    server = WebUIProcess(folder, extra_env, port)
    try:
        server.wait_url()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def webui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebUIProcess]:
    with running_webui(tmp_path_factory.mktemp("webui")) as server:
        yield server


@pytest.fixture(scope="module")
def keyed_webui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebUIProcess]:
    """A WebUI that requires API_KEY (given in the environment, so it is never printed)."""
    with running_webui(tmp_path_factory.mktemp("webui-key"), {"STARWEAVE_API_KEY": API_KEY}) as server:
        yield server


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go (a test artifact under the pytest tmp dir)."""
    return tmp_path_factory.mktemp("screenshots")


def wait(driver: Any, condition: Any, what: str, server: WebUIProcess, timeout: float = WAIT) -> Any:
    """WebDriverWait with a message that shows the page's state and the server's output."""
    try:
        return WebDriverWait(
            driver, timeout, poll_frequency=0.2, ignored_exceptions=(StaleElementReferenceException,)
        ).until(condition)
    except TimeoutException as exc:  # say what we waited for and what the page showed
        raise AssertionError(
            f"timed out waiting for {what}: {exc!r}\nDAG: {node_statuses(driver)}\n"
            f"chat: {chat(driver)}\nserver:\n{server.log()}"
        ) from exc


# The page redraws the DAG and the lists on every event, so they are read in one script call
# (a snapshot of the DOM) rather than element by element (references would go stale).
NODES_JS = """return Array.from(document.querySelectorAll('#dag [data-task-id]'))
  .map((n) => [n.dataset.taskId, n.dataset.status]);"""
EDGES_JS = """return Array.from(document.querySelectorAll('#dag path.edge'))
  .map((e) => [e.dataset.from, e.dataset.to]);"""
EVENTS_JS = """return Array.from(document.querySelectorAll('#event-log .event'))
  .map((r) => r.dataset.eventType + ' ' + r.querySelector('.event-summary').textContent);"""
CHAT_JS = """return Array.from(document.querySelectorAll('#chat-log .msg'))
  .map((m) => [m.dataset.role, m.dataset.kind, m.dataset.status || '',
               m.querySelector('.msg-text').textContent]);"""


COLOURS_JS = """return Array.from(document.querySelectorAll('#dag [data-task-id]'))
  .map((n) => [n.dataset.taskId, getComputedStyle(n.querySelector('rect')).stroke]);"""


LOSE_STATE_JS = """window.starweaveWebUI.handleMessage(
  {type: 'state_snapshot', constellation: null, messages: [], events: [], running: false});"""
UNKNOWN_JS = """const ui = window.starweaveWebUI;
ui.handleMessage({type: 'mystery', text: 'x'});
ui.handleMessage({event_type: 'device_heartbeat', source_id: 'x', timestamp: Date.now() / 1000,
  data: {}, device_id: 'local_linux_1'});"""


def node_colours(driver: Any) -> dict[str, str]:
    """Each node's border colour as drawn."""
    return {task_id: colour for task_id, colour in driver.execute_script(COLOURS_JS)}


def node_statuses(driver: Any) -> dict[str, str]:
    return {task_id: status for task_id, status in driver.execute_script(NODES_JS)}


def chat(driver: Any) -> list[tuple[str, ...]]:
    """(role, kind, status, text) of every chat message."""
    return [tuple(m) for m in driver.execute_script(CHAT_JS)]


def click_node(driver: Any, task_id: str) -> bool:
    driver.find_element(By.CSS_SELECTOR, f'#dag [data-task-id="{task_id}"]').click()
    return True


def connected(driver: Any) -> bool:
    return driver.find_element(By.ID, "conn-state").get_attribute("data-state") == "connected"


def open_page(driver: Any, url: str, server: WebUIProcess) -> None:
    driver.get(url)
    wait(driver, connected, "the page to connect", server)
    wait(
        driver,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#device-list [data-device-id]")) == len(DEVICES),
        "both devices in the device panel",
        server,
    )


def event_rows(driver: Any) -> list[str]:
    return list(driver.execute_script(EVENTS_JS))


def open_device_form(driver: Any, server: WebUIProcess) -> None:
    driver.find_element(By.ID, "add-device").click()
    wait(driver, lambda d: d.find_element(By.ID, "dev-id").is_displayed(), "the add-device form", server)


def fill_device_form(driver: Any, **fields: str) -> None:
    """Type into the add-device form (field names as in the request: device_id, server_url, os,
    capabilities) and submit it."""
    ids = {"device_id": "dev-id", "server_url": "dev-url", "os": "dev-os", "capabilities": "dev-caps"}
    for name, value in fields.items():
        box = driver.find_element(By.ID, ids[name])
        box.clear()
        box.send_keys(value)
    driver.find_element(By.ID, "dev-submit").click()


def form_error(driver: Any, field: str | None = None) -> str:
    """A field's validation message, or the server's answer (field None)."""
    if field is None:
        return str(driver.find_element(By.ID, "device-form-error").text)
    return str(driver.find_element(By.CSS_SELECTOR, f'[data-error-for="{field}"]').text)


VALID_DEVICE = {
    "device_id": "lab_box_1",
    "server_url": "ws://127.0.0.1:5999/ws",
    "os": "linux",
    "capabilities": "shell, files",
}


def test_add_device_refuses_an_invalid_url(chromium: Any, webui: WebUIProcess, shots: Path) -> None:
    driver = chromium
    open_page(driver, webui.url, webui)
    open_device_form(driver, webui)
    fill_device_form(driver)
    assert form_error(driver, "device_id") == "Device ID is required"
    assert form_error(driver, "server_url") == "Server URL is required"
    assert form_error(driver, "os") == "OS is required"
    assert form_error(driver, "capabilities") == "At least one capability required"

    fill_device_form(
        driver, **dict(VALID_DEVICE, device_id=DEVICES[0], server_url="http://127.0.0.1:5000/ws")
    )
    assert form_error(driver, "server_url") == "Invalid WebSocket URL"
    assert form_error(driver, "device_id") == "Device ID already exists"
    assert form_error(driver, "os") == "" and form_error(driver, "capabilities") == ""
    driver.save_screenshot(str(shots / "webui-add-device.png"))

    # Valid input reaches the server; a --local fleet has no devices file, so its 404 is shown.
    fill_device_form(driver, **VALID_DEVICE)
    wait(driver, lambda d: form_error(d) == "devices.yaml not found", "the server's 404 in the form", webui)
    driver.find_element(By.ID, "dev-cancel").click()
    assert not driver.find_element(By.ID, "device-modal").is_displayed()


def test_a_chat_request_runs_live_on_two_pages_and_survives_a_reload(
    chromium: Any, webui: WebUIProcess, shots: Path
) -> None:
    driver = chromium
    open_page(driver, webui.url, webui)
    first = driver.current_window_handle
    driver.switch_to.new_window("window")
    second = driver.current_window_handle
    open_page(driver, webui.url, webui)
    driver.switch_to.window(first)

    chat_input = driver.find_element(By.ID, "chat-input")
    chat_input.send_keys(REQUEST)
    driver.find_element(By.ID, "chat-send").click()
    wait(driver, lambda d: len(node_statuses(d)) == 3, "the three-task DAG", webui)
    # While t1 and t2 run (blue), t3 waits for them (gray); then everything turns green.
    wait(
        driver,
        lambda d: node_statuses(d)["t1"] == node_statuses(d)["t2"] == "running",
        "t1 and t2 running",
        webui,
    )
    assert node_statuses(driver)["t3"] in ("pending", "waiting_dependency")
    assert node_colours(driver) == {"t1": BLUE, "t2": BLUE, "t3": GRAY}
    wait(driver, lambda d: click_node(d, "t1"), "a click on t1", webui)
    wait(driver, lambda d: d.find_element(By.ID, "detail-status").text == "running", "t1 details", webui)
    driver.save_screenshot(str(shots / "webui.png"))
    keep_screenshot(shots / "webui.png")  # the README's picture: the page during a run
    wait(
        driver,
        lambda d: set(node_statuses(d).values()) == {"completed"},
        "every DAG node to turn completed",
        webui,
    )
    assert node_colours(driver) == dict.fromkeys(["t1", "t2", "t3"], GREEN)
    wait(driver, lambda d: any(m[1] == "final" for m in chat(d)), "the final answer in the chat", webui)
    messages = chat(driver)
    assert messages[0] == ("user", "request", "", REQUEST), messages
    assert [m[2] for m in messages if m[1] == "final"] == ["FINISH"], messages
    assert any(m[1] == "thought" and m[3] == PLAN["thought"] for m in messages), messages
    assert sorted(map(tuple, driver.execute_script(EDGES_JS))) == [("t1", "t3"), ("t2", "t3")]

    # A task's details on click: its description, device and result.
    wait(driver, lambda d: click_node(d, "t2"), "a click on t2", webui)
    wait(
        driver,
        lambda d: d.find_element(By.ID, "task-details").get_attribute("data-task-id") == "t2",
        "t2's details",
        webui,
    )
    assert driver.find_element(By.ID, "detail-device").text == DEVICES[1]
    assert driver.find_element(By.ID, "detail-description").text == WRITE
    assert driver.find_element(By.ID, "detail-result").text == DEVICE_RESULT
    assert driver.find_element(By.ID, "detail-status").text == "completed"
    driver.save_screenshot(str(shots / "webui-completed.png"))
    events = event_rows(driver)
    assert any(row.startswith("task_completed t3") for row in events), events

    # The second page saw the same run live: same DAG, same chat, same events.
    driver.switch_to.window(second)
    wait(
        driver,
        lambda d: node_statuses(d) == dict.fromkeys(["t1", "t2", "t3"], "completed"),
        "the second page's DAG to complete",
        webui,
    )
    wait(driver, lambda d: event_rows(d) == events, "the second page's event log to match", webui)
    assert chat(driver) == messages
    driver.close()
    driver.switch_to.window(first)

    # A reload reconnects and shows the current state, not an empty page.
    driver.refresh()
    wait(driver, connected, "the reloaded page to connect", webui)
    wait(
        driver,
        lambda d: node_statuses(d) == dict.fromkeys(["t1", "t2", "t3"], "completed"),
        "the DAG after the reload",
        webui,
    )
    assert chat(driver) == messages
    assert event_rows(driver), "the event log is empty after the reload"

    # A page that fell behind is told "dropped" and asks for a fresh snapshot: simulate one that lost
    # everything, then check the server's snapshot brings the state back.
    driver.execute_script(LOSE_STATE_JS)
    assert not node_statuses(driver) and not chat(driver)
    driver.execute_script("window.starweaveWebUI.handleMessage({type: 'dropped', count: 3});")
    wait(driver, lambda d: chat(d) == messages, "the chat back after the dropped notice", webui)
    assert node_statuses(driver) == dict.fromkeys(["t1", "t2", "t3"], "completed")
    # Event and message types the page does not know are logged or ignored, never fatal.
    driver.execute_script(UNKNOWN_JS)
    wait(driver, lambda d: event_rows(d)[0].startswith("device_heartbeat"), "the unknown event logged", webui)

    # Reset clears the DAG, the chat and the log (every page gets a fresh snapshot).
    driver.find_element(By.ID, "reset").click()
    wait(driver, lambda d: not node_statuses(d) and not chat(d), "an empty page after the reset", webui)
    assert driver.find_element(By.ID, "dag-empty").is_displayed()
    assert event_rows(driver) == []
    assert script_errors(driver) == []


def script_errors(driver: Any) -> list[str]:
    """The page's JavaScript errors (network answers such as an expected 404 are not counted)."""
    return [
        e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE" and e["source"] != "network"
    ]


def test_the_key_travels_in_the_fragment_never_in_a_url(chromium: Any, keyed_webui: WebUIProcess) -> None:
    driver = chromium
    driver.get(keyed_webui.url + "#key=" + API_KEY)
    wait(driver, connected, "the keyed page to connect", keyed_webui)
    # The page moved the key out of the address bar into this tab's sessionStorage.
    assert API_KEY not in driver.current_url and driver.execute_script("return location.hash") == ""
    assert driver.execute_script("return sessionStorage.getItem('starweave.webui.key')") == API_KEY
    # Its HTTP calls carry the key as X-API-Key: the server answers the request itself (404, a
    # --local fleet has no devices file) instead of refusing it.
    open_device_form(driver, keyed_webui)
    fill_device_form(driver, **VALID_DEVICE)
    wait(driver, lambda d: form_error(d) == "devices.yaml not found", "the keyed 404 answer", keyed_webui)
    driver.find_element(By.ID, "dev-cancel").click()
    # A reload keeps the key (sessionStorage).
    driver.refresh()
    wait(driver, connected, "the reloaded keyed page to connect", keyed_webui)
    first = driver.current_window_handle

    # A fresh tab without the key is refused at once and says why.
    driver.switch_to.new_window("tab")
    driver.get(keyed_webui.url)
    wait(
        driver,
        lambda d: "Invalid or missing API key" in d.find_element(By.ID, "conn-label").text,
        "the refusal in the header",
        keyed_webui,
    )
    assert not node_statuses(driver) and not chat(driver)
    assert driver.find_elements(By.CSS_SELECTOR, "#device-list [data-device-id]") == []
    driver.close()
    driver.switch_to.window(first)
    assert API_KEY not in keyed_webui.log()


def keep_screenshot(path: Path) -> None:
    """Copy the screenshot to $STARWEAVE_SCREENSHOT_DIR (e.g. ``docs``) as the README's picture."""
    target = os.environ.get("STARWEAVE_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(target) / path.name)


def session_id(driver: Any) -> str:
    return str(driver.find_element(By.ID, "session-name").get_attribute("title"))


@pytest.mark.slow  # two server starts and the page's reconnect backoff: about 10 s
def test_the_page_reconnects_when_the_server_comes_back(chromium: Any, tmp_path: Path) -> None:
    driver = chromium
    port = free_port()
    with running_webui(tmp_path / "first", port=port) as first:
        open_page(driver, first.url, first)
        before = session_id(driver)
    # The server is gone: the page says so and keeps trying (1 s, 2 s, 4 s ... apart).
    wait(driver, lambda d: not connected(d), "the page to notice the server left", first)
    with running_webui(tmp_path / "second", port=port) as second:
        assert f":{port}/" in second.url, f"port {port} was not free again: {second.url}"
        wait(driver, connected, "the page to reconnect by itself", second)
        wait(driver, lambda d: session_id(d) not in ("", before), "the new session's name", second)
        assert len(driver.find_elements(By.CSS_SELECTOR, "#device-list [data-device-id]")) == len(DEVICES)

"""A phone as a Galaxy device: a ``mobile`` device client on the simulated phone
(tests/helpers/android_sim) registered with a real agent server, whose MobileAgent session (replay
provider) sends every data-collection and action command to the device over AIP.

Everything is real but the model and the phone: the server and the device client talk over
WebSockets, the MobileDataCollector / MobileExecutor servers run in the device client and drive the
simulated phone through the real adb layer; the checks read the phone's state.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from helpers.mobile_replay import mobile_answer, note_answers
from integration.server_fault_kit import agent_server, device, result_of

pytestmark = pytest.mark.slow

LIMIT = 120


async def test_a_phone_runs_a_mobile_agent_session_sent_over_aip(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    async with asyncio.timeout(LIMIT):
        async with (
            agent_server(tmp_path, note_answers("buy oat milk")) as server,
            device(tmp_path, server, "phone1", platform="mobile", **android_phone.client_options),
            httpx.AsyncClient(base_url=server.url) as http,
        ):
            listing = (await http.get("/api/clients", params={"details": True})).json()
            [phone] = [c for c in listing["clients"] if c["client_id"] == "phone1"]
            assert phone["platform"] == "mobile"
            assert phone["capabilities"]["supported_features"] == [
                "mobile",
                "android",
                "touch",
                "calculator",
                "notes",
            ]
            sent = await http.post(
                "/api/dispatch",
                json={"client_id": "phone1", "request": "note: buy oat milk", "task_name": "note1"},
            )
            assert sent.status_code == 200, sent.text
            answer = await result_of(http, "note1", limit=LIMIT - 10)
        assert answer["task_status"] == "completed", answer
        result = answer["result"]
        assert result["agent"] == "MobileAgent" and result["status"] == "FINISH", result
    state = android_phone.state()
    assert state["notes"] == ["buy oat milk"] and state["screen"] == "notes"
    # The observations came from the phone through the device: the uiautomator dumps reached the sim.
    assert any("uiautomator" in command for command in state["history"])
    logs = tmp_path / "logs" / "note1"
    assert (logs / "action_step1.png").is_file() and (logs / "action_step1_annotated.png").is_file()


async def test_a_session_on_a_phone_that_went_away_fails_with_the_reason(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    answers = [mobile_answer("launch_app", {"package_name": "com.example.notes"})]
    async with asyncio.timeout(LIMIT):
        async with (
            agent_server(tmp_path, answers) as server,
            device(tmp_path, server, "phone2", platform="mobile", **android_phone.client_options),
            httpx.AsyncClient(base_url=server.url) as http,
        ):
            android_phone.set_online(False)  # unplugged after registering
            sent = await http.post(
                "/api/dispatch",
                json={"client_id": "phone2", "request": "open notes", "task_name": "gone"},
            )
            assert sent.status_code == 200, sent.text
            answer = await result_of(http, "gone", limit=LIMIT - 10)
        assert answer["result"]["status"] == "FAIL", answer
    assert android_phone.state()["screen"] == "launcher"
    # The device's adb error reached the agent on the server: it names the phone, and the task
    # FAILed in DATA_COLLECTION, before the model was asked to act on a phone it cannot see.
    reason = json.dumps(answer["result"])
    assert (
        "the phone is no longer reachable" in reason
        and f"device '{android_phone.serial}' not found" in reason
    )
    assert not (tmp_path / "logs" / "gone" / "llm.log").exists()

"""Online search (RAG_ONLINE_SEARCH) against a loopback server speaking the Bing Web Search v7 JSON."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from helpers.fake_bing_server import FakeBing, bing_answer, fake_bing
from helpers.linux_replay import answer, prompts, responses, run

from starweave.config.models import StarweaveConfig, SystemConfig
from starweave.knowledge.bing import BingSearch, SearchError, WebResult
from starweave.knowledge.retrieval import KNOWLEDGE_HEADER, Retriever
from starweave.session.loop import secrets_of

KEY = "bing-secret-0123456789"
PAGES = [(f"Page {n}", f"https://example.org/{n}", f"snippet number {n}") for n in range(4)]


@pytest.fixture
def bing() -> FakeBing:
    with fake_bing() as server:
        yield server


async def test_the_search_sends_the_documented_query_and_header(bing: FakeBing) -> None:
    bing.body = bing_answer(*PAGES)
    found = await BingSearch(KEY, bing.endpoint).search("resize an image with convert", 3)
    assert found == [WebResult(*page) for page in PAGES[:3]]
    assert bing.paths == ["/v7.0/search"]
    assert bing.queries == [{"q": ["resize an image with convert"], "count": ["3"]}]
    assert bing.keys == [KEY]


def online(endpoint: str, key: str = KEY, search_topk: int = 4, retrieved_topk: int = 2) -> SystemConfig:
    return SystemConfig.model_validate(
        {
            "RAG_ONLINE_SEARCH": True,
            "BING_API_KEY": key,
            "BING_SEARCH_ENDPOINT": endpoint,
            "RAG_ONLINE_SEARCH_TOPK": search_topk,
            "RAG_ONLINE_RETRIEVED_TOPK": retrieved_topk,
        }
    )


async def test_topk_results_are_fetched_and_fewer_reach_the_prompt(bing: FakeBing) -> None:
    bing.body = bing_answer(*PAGES)
    found = await Retriever(online(bing.endpoint)).retrieve("resize an image")
    assert bing.queries[0]["count"] == ["4"]
    assert [p.source for p in found.passages] == ["https://example.org/0", "https://example.org/1"]
    text = found.knowledge_text()
    assert text.startswith(KNOWLEDGE_HEADER)
    assert "[1] https://example.org/0\n> Page 0\n> snippet number 0" in text
    assert KEY not in text


async def test_an_answer_without_web_pages_finds_nothing(bing: FakeBing) -> None:
    bing.body = {"_type": "SearchResponse", "queryContext": {"originalQuery": "x"}}
    assert await BingSearch(KEY, bing.endpoint).search("x", 5) == []


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            401,
            {"error": {"code": "401", "message": "Access denied due to invalid subscription key."}},
            "HTTP 401: Access denied",
        ),
        (500, b"<html>oops</html>", "HTTP 500"),
        (200, b"{not json", "not JSON"),
        (200, [1, 2], "JSON list, not an object"),
        (200, {"webPages": {"value": "nope"}}, "not a list"),
    ],
)
async def test_a_failed_search_is_a_warning_and_the_run_goes_on(
    bing: FakeBing, caplog: pytest.LogCaptureFixture, status: int, body: object, message: str
) -> None:
    bing.status, bing.body = status, body
    with pytest.raises(SearchError, match=message):
        await BingSearch(KEY, bing.endpoint).search("x", 5)
    with caplog.at_level(logging.WARNING, logger="starweave.knowledge.retrieval"):
        found = await Retriever(online(bing.endpoint)).retrieve("x")
    assert found.passages == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "web search skipped" in warnings[0] and message.split(":")[0] in warnings[0]
    assert KEY not in caplog.text


async def test_a_search_that_hangs_times_out_into_a_warning(bing: FakeBing) -> None:
    bing.hang = True
    with pytest.raises(SearchError, match=r"no answer from .* within 0.3 s"):
        await BingSearch(KEY, bing.endpoint, timeout=0.3).search("x", 5)


async def test_an_unreachable_endpoint_is_an_error_not_a_crash() -> None:
    with fake_bing() as server:
        endpoint = server.endpoint
    with pytest.raises(SearchError, match="cannot reach"):
        await BingSearch(KEY, endpoint).search("x", 5)


async def test_without_a_key_nothing_is_sent_and_one_warning_says_why(
    bing: FakeBing, caplog: pytest.LogCaptureFixture
) -> None:
    retriever = Retriever(online(bing.endpoint, key=""))
    with caplog.at_level(logging.WARNING, logger="starweave.knowledge.retrieval"):
        assert (await retriever.retrieve("first")).passages == []
        assert (await retriever.retrieve("second")).passages == []
    assert bing.queries == []
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["RAG_ONLINE_SEARCH is on but BING_API_KEY is empty: no web search"]


async def test_a_run_with_web_search_quotes_the_results_and_never_logs_the_key(
    bing: FakeBing, tmp_path: Path
) -> None:
    bing.body = bing_answer(("Disk usage", "https://example.org/du", "du -sh shows a folder's size"))
    (tmp_path / "config" / "ufo").mkdir(parents=True)
    (tmp_path / "config" / "ufo" / "rag.yaml").write_text(
        f"RAG_ONLINE_SEARCH: true\nBING_API_KEY: {KEY}\nBING_SEARCH_ENDPOINT: {bing.endpoint}\n"
    )
    answers = [
        {"$if_prompt_contains": "du -sh shows", "then": answer("du -sh ."), "else": answer("ls")},
        answer(None, "FINISH", result="measured"),
    ]
    await run(tmp_path, answers, request="how big is this folder", config_dir=tmp_path / "config")
    assert bing.keys == [KEY] and bing.queries[0]["q"] == ["how big is this folder"]
    assert responses(tmp_path)[0]["action"]["arguments"]["command"] == "du -sh ."
    user = prompts(tmp_path)[0][1]["content"]
    assert user.endswith("[1] https://example.org/du\n> Disk usage\n> du -sh shows a folder's size")
    logs = "".join(p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    assert logs and KEY not in logs
    config = StarweaveConfig.model_validate({"system": {"BING_API_KEY": KEY}})
    assert KEY in secrets_of(config)

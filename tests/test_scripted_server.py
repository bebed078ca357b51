"""Tests of the scripted OpenAI-compatible server, driven by the real ``openai`` SDK."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import openai
import pytest

from graphmem.testing import Fault, ScriptedLLMServer


def _tool(name: str) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {"type": "object", "properties": {}},
        },
    }


def _ask(client: openai.OpenAI, tool: str, text: str = "Alice works at Acme.", forced: bool = True):
    kwargs = {}
    if forced:
        kwargs["tool_choice"] = {"type": "function", "function": {"name": tool}}
    return client.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "system", "content": "You extract things."},
            {"role": "user", "content": text},
        ],
        tools=[_tool(tool)],
        **kwargs,
    )


def _args(resp) -> list:
    return [json.loads(c.function.arguments) for c in resp.choices[0].message.tool_calls]


@pytest.fixture
def server():
    srv = ScriptedLLMServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=5.0) as c:
        yield c


def test_base_url_and_models(server, client):
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    assert server.port != 0
    models = client.models.list()
    assert [m.id for m in models.data] == ["scripted-model"]


def test_scripted_reply_with_tool_name_and_arguments(server, client):
    server.enqueue("extract_entities", {"entities": [{"name": "alice", "type": "person"}]})
    resp = _ask(client, "extract_entities")
    assert resp.object == "chat.completion"
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.role == "assistant"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "function"
    assert call.id
    assert call.function.name == "extract_entities"
    assert json.loads(call.function.arguments) == {"entities": [{"name": "alice", "type": "person"}]}
    assert resp.usage.prompt_tokens == (len("You extract things.") + len("Alice works at Acme.")) // 4
    assert resp.usage.completion_tokens == len(call.function.arguments) // 4
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    assert server.unscripted == 0


def test_tool_name_from_tools_when_no_tool_choice(server, client):
    server.enqueue("extract_facts", {"facts": ["likes tea"]})
    resp = _ask(client, "extract_facts", forced=False)
    assert resp.choices[0].message.tool_calls[0].function.name == "extract_facts"
    assert _args(resp) == [{"facts": ["likes tea"]}]


def test_fifo_per_tool_independent_across_tools(server, client):
    server.enqueue("extract_entities", {"entities": [{"name": "e1"}]}, {"entities": [{"name": "e2"}]})
    server.enqueue("extract_facts", {"facts": ["f1"]})
    server.enqueue("extract_facts", {"facts": ["f2"]})
    assert server.pending() == 4 and server.pending("extract_facts") == 2
    # interleave in an order different from enqueue order
    assert _args(_ask(client, "extract_facts")) == [{"facts": ["f1"]}]
    assert _args(_ask(client, "extract_entities")) == [{"entities": [{"name": "e1"}]}]
    assert _args(_ask(client, "extract_facts")) == [{"facts": ["f2"]}]
    assert _args(_ask(client, "extract_entities")) == [{"entities": [{"name": "e2"}]}]
    assert server.pending() == 0
    # queues exhausted -> defaults
    assert _args(_ask(client, "extract_facts")) == [{"facts": []}]
    assert server.unscripted == 1


def test_list_reply_gives_several_tool_calls(server, client):
    deletes = [
        {"relations": [{"source": "alice", "relationship": "works_at", "destination": "acme"}]},
        {"relations": [{"source": "bob", "relationship": "likes", "destination": "tea"}]},
    ]
    server.enqueue("delete_graph_memory", deletes)
    resp = _ask(client, "delete_graph_memory")
    calls = resp.choices[0].message.tool_calls
    assert len(calls) == 2
    assert {c.function.name for c in calls} == {"delete_graph_memory"}
    assert len({c.id for c in calls}) == 2
    assert _args(resp) == deletes


def test_string_reply_sent_verbatim(server, client):
    server.enqueue("extract_entities", '{"entities": [{"name": "x"}')
    resp = _ask(client, "extract_entities")
    assert resp.choices[0].message.tool_calls[0].function.arguments == '{"entities": [{"name": "x"}'


def test_enqueue_rejects_bad_reply_types(server):
    with pytest.raises(TypeError):
        server.enqueue("extract_entities", 42)
    with pytest.raises(TypeError):
        server.enqueue("extract_entities", [1, 2])


def test_handler_fallback(server, client):
    seen = []

    def handler(tool, body):
        seen.append((tool, body["messages"][-1]["content"]))
        if tool == "summarize":
            return {"summary": "echo: " + body["messages"][-1]["content"]}
        return None  # fall through to the default

    server.set_handler(handler)
    server.enqueue("summarize", {"summary": "queued first"})
    assert _args(_ask(client, "summarize", "hi")) == [{"summary": "queued first"}]
    assert _args(_ask(client, "summarize", "hello")) == [{"summary": "echo: hello"}]
    assert server.unscripted == 0
    assert _args(_ask(client, "extract_entities")) == [{"entities": []}]
    assert server.unscripted == 1
    assert seen == [("summarize", "hello"), ("extract_entities", "Alice works at Acme.")]


def test_handler_exception_becomes_500(server, client):
    def handler(tool, body):
        raise ValueError("boom")

    server.set_handler(handler)
    with pytest.raises(openai.InternalServerError) as info:
        _ask(client, "summarize")
    assert "boom" in str(info.value)


@pytest.mark.parametrize(
    "tool, expected",
    [
        ("extract_entities", {"entities": []}),
        ("establish_relationships", {"relations": []}),
        ("delete_graph_memory", {"relations": []}),
        ("extract_facts", {"facts": []}),
        ("update_memory", {"memory": []}),
        ("summarize", {"summary": ""}),
        ("some_other_tool", {}),
    ],
)
def test_default_empty_replies(server, client, tool, expected):
    resp = _ask(client, tool)
    assert resp.choices[0].message.tool_calls[0].function.name == tool
    assert _args(resp) == [expected]
    assert server.unscripted == 1


def test_fault_rate_limit(server, client):
    server.inject("rate_limit")
    server.enqueue("extract_entities", {"entities": [{"name": "alice"}]})
    with pytest.raises(openai.RateLimitError) as info:
        _ask(client, "extract_entities")
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "0"
    assert info.value.body["type"] == "rate_limit_error"
    # fault consumed; scripted reply untouched and served next
    assert _args(_ask(client, "extract_entities")) == [{"entities": [{"name": "alice"}]}]
    assert server.calls("extract_entities") == 2
    assert [r.fault for r in server.requests] == [Fault.RATE_LIMIT, None]


def test_fault_rate_limit_with_sdk_retries(server):
    server.inject(Fault.RATE_LIMIT, times=1)
    server.enqueue("summarize", {"summary": "ok"})
    with openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=1, timeout=5.0) as c:
        assert _args(_ask(c, "summarize")) == [{"summary": "ok"}]
    assert server.calls() == 2


def test_fault_server_error(server, client):
    server.inject(Fault.SERVER_ERROR)
    with pytest.raises(openai.InternalServerError) as info:
        _ask(client, "extract_facts")
    assert info.value.status_code == 500
    assert _args(_ask(client, "extract_facts")) == [{"facts": []}]


def test_fault_timeout(server):
    server.inject("timeout", delay=2.0)
    server.enqueue("extract_entities", {"entities": [{"name": "late"}]})
    with openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=0.5) as c:
        with pytest.raises(openai.APITimeoutError):  # the client gave up at its 0.5 s timeout
            _ask(c, "extract_entities")
        # the next request is not faulted and gets the scripted reply
        assert _args(_ask(c, "extract_entities")) == [{"entities": [{"name": "late"}]}]
    assert server.calls("extract_entities") == 2


def test_fault_timeout_short_delay_answers_normally(server, client):
    server.inject("timeout", delay=0.1)
    server.enqueue("summarize", {"summary": "slow"})
    assert _args(_ask(client, "summarize")) == [{"summary": "slow"}]
    assert server.requests[-1].fault == Fault.TIMEOUT  # the delay was applied, then a normal answer


def test_fault_malformed(server, client):
    server.inject("malformed")
    resp = _ask(client, "extract_entities")
    call = resp.choices[0].message.tool_calls[0]
    assert call.function.name == "extract_entities"
    assert call.function.arguments == '{"entities": ['
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.function.arguments)


def test_fault_unknown_tool(server, client):
    server.inject("unknown_tool")
    resp = _ask(client, "extract_entities")
    assert resp.choices[0].message.tool_calls[0].function.name == "not_a_tool"


def test_fault_no_tool_call(server, client):
    server.inject("no_tool_call")
    resp = _ask(client, "extract_entities")
    message = resp.choices[0].message
    assert not message.tool_calls
    assert isinstance(message.content, str) and message.content
    assert resp.choices[0].finish_reason == "stop"


def test_fault_bad_json_body(server, client):
    server.inject("bad_json_body")
    with pytest.raises(ValueError):  # json.JSONDecodeError from the SDK's response.json()
        _ask(client, "extract_entities")
    assert server.calls() == 1


def test_fault_scoped_to_tool_and_times(server, client):
    server.inject("server_error", times=2, tool="extract_facts")
    # other tools are unaffected
    assert _args(_ask(client, "extract_entities")) == [{"entities": []}]
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            _ask(client, "extract_facts")
    assert _args(_ask(client, "extract_facts")) == [{"facts": []}]
    assert server.calls("extract_facts") == 3 and server.calls("extract_entities") == 1


def test_faults_consumed_in_injection_order(server, client):
    server.inject("rate_limit")
    server.inject("server_error")
    with pytest.raises(openai.RateLimitError):
        _ask(client, "summarize")
    with pytest.raises(openai.InternalServerError):
        _ask(client, "summarize")


def test_unknown_fault_name_rejected(server):
    with pytest.raises(ValueError):
        server.inject("not_a_fault")


def test_requests_recorded(server, client):
    _ask(client, "extract_entities", "first message")
    _ask(client, "summarize", "second message")
    reqs = server.requests
    assert [r.tool for r in reqs] == ["extract_entities", "summarize"]
    assert reqs[0].messages[-1] == {"role": "user", "content": "first message"}
    assert reqs[0].body["model"] == "gpt-test"
    assert reqs[0].body["tool_choice"]["function"]["name"] == "extract_entities"
    assert reqs[0].timestamp <= reqs[1].timestamp
    assert server.calls() == 2 and server.calls("summarize") == 1 and server.calls("nope") == 0


def test_reset_clears_everything(server, client):
    server.enqueue("extract_entities", {"entities": [{"name": "a"}]})
    server.inject("server_error", tool="summarize")
    server.set_handler(lambda tool, body: {"facts": ["h"]})
    _ask(client, "extract_facts")
    server.reset()
    assert server.requests == [] and server.calls() == 0 and server.unscripted == 0
    assert server.pending() == 0
    assert _args(_ask(client, "extract_entities")) == [{"entities": []}]
    assert _args(_ask(client, "summarize")) == [{"summary": ""}]
    assert _args(_ask(client, "extract_facts")) == [{"facts": []}]


def test_plain_chat_completions_path(server):
    # base URL without /v1 hits POST /chat/completions
    root = server.base_url[: -len("/v1")]
    server.enqueue("summarize", {"summary": "root"})
    with openai.OpenAI(base_url=root, api_key="test", max_retries=0, timeout=5.0) as c:
        assert _args(_ask(c, "summarize")) == [{"summary": "root"}]
    assert server.requests[0].path == "/chat/completions"


def test_concurrent_requests_all_answered(server):
    n = 24
    for i in range(n):
        server.enqueue("extract_entities", {"entities": [{"name": f"e{i}"}]})
        server.enqueue("extract_facts", {"facts": [f"f{i}"]})
    results: dict[str, list] = {"extract_entities": [], "extract_facts": []}
    errors = []
    lock = threading.Lock()

    shared = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=5.0)
    start = threading.Barrier(2 * n)

    def worker(tool):
        try:
            start.wait(5)
            args = _args(_ask(shared, tool))[0]
            with lock:
                results[tool].append(args)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in ("extract_entities", "extract_facts") * n]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    shared.close()
    assert errors == []
    assert sorted(a["entities"][0]["name"] for a in results["extract_entities"]) == sorted(f"e{i}" for i in range(n))
    assert sorted(a["facts"][0] for a in results["extract_facts"]) == sorted(f"f{i}" for i in range(n))
    assert server.calls() == 2 * n and server.unscripted == 0 and server.pending() == 0


def test_context_manager_and_prompt_stop():
    with ScriptedLLMServer(model="demo-model") as srv:
        url = srv.base_url
        with urllib.request.urlopen(url + "/models", timeout=2) as resp:
            data = json.load(resp)
        assert data["data"][0]["id"] == "demo-model"
        # a request sleeping in a timeout fault must not block stop(): stop cuts the sleep short and
        # drops the connection, so the client sees a closed connection, not its own 30 s timeout
        srv.inject("timeout", delay=30)
        outcome: list[BaseException] = []
        client = threading.Thread(
            target=lambda: _record_error(outcome, lambda: urllib.request.urlopen(
                urllib.request.Request(
                    url + "/chat/completions",
                    data=json.dumps({"messages": [], "tools": [_tool("summarize")]}).encode(),
                    headers={"Content-Type": "application/json"},
                ),
                timeout=30,
            )),
            daemon=True,
        )
        client.start()
        deadline = time.monotonic() + 2
        while srv.calls() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.calls() == 1
    client.join()
    assert not srv.running
    assert len(outcome) == 1 and not isinstance(outcome[0], TimeoutError), outcome
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/models", timeout=1)


def _record_error(errors: list, fn) -> None:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        errors.append(exc)



def test_nothing_printed_to_stdout(server, client, capfd):
    server.inject("server_error")
    with pytest.raises(openai.InternalServerError):
        _ask(client, "summarize")
    _ask(client, "summarize")
    out, err = capfd.readouterr()
    assert out == "" and err == ""

"""benchmarks.peers.add_modes counts each request's tokens once, the same way for every engine, and the
rolling summary's apart (its figures were doubled once the scripted server began to count usage
itself)."""

from __future__ import annotations

import openai

from benchmarks.peers.add_modes import CountingServer


def _ask(server: CountingServer, tool: str) -> dict:
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    spec = {"type": "function", "function": {"name": tool, "parameters": {"type": "object", "properties": {}}}}
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x" * 400}], tools=[spec],
                                            tool_choice={"type": "function", "function": {"name": tool}})
    return {"prompt": answer.usage.prompt_tokens, "completion": answer.usage.completion_tokens}


def test_each_request_is_counted_once_and_the_summary_apart():
    with CountingServer() as server:
        server.set_handler(lambda tool, body: {"facts": ["a fact"]} if tool != "summarize" else {"summary": "s"})
        first = _ask(server, "extract_facts")
        assert first["prompt"] == 100  # 400 characters / 4
        assert server.add_tokens() == (first["prompt"], first["completion"])
        summary = _ask(server, "summarize")
        assert server.summary_requests == 1
        assert server.add_tokens() == (first["prompt"], first["completion"])
        assert (server.prompt_tokens, server.completion_tokens) == (first["prompt"] + summary["prompt"],
                                                                    first["completion"] + summary["completion"])

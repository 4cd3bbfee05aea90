"""A verdict answered from the parser cache is not written back: each write re-encoded the whole
verdict (~150 KB with the environment registry, ~20 ms), on every `status` for every server. And
every HTTP client shares one TLS context: httpx built one per client, loading the CA bundle."""

from __future__ import annotations

import asyncio

from sglconsole.remote import parser_cache
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.parser_cache import ParserCache, canonicalize_cached
from sglconsole.remote.sglang_args import Canonical, Verdict

ARGVS = {"profile": ["--port", "30000"]}


def verdict() -> Verdict:
    return Verdict(True, "0.5.23", "/usr/bin/python3", {}, {"profile": Canonical({}, set())})


class Host:
    name = "gpu00"


def test_a_cached_verdict_is_not_asked_again_nor_written_again(tmp_path, monkeypatch):
    asked, written = [], []

    async def ask(_ssh, _python, _argvs):
        asked.append(1)
        return verdict()

    monkeypatch.setattr(parser_cache, "canonicalize_remote", ask)
    original_put = ParserCache.put
    monkeypatch.setattr(
        ParserCache,
        "put",
        lambda self, key, found: written.append(key) or original_put(self, key, found),
    )
    for _ in range(2):  # two runs: a fresh memory each, the same folder
        cache = ParserCache(tmp_path)
        for _ in range(2):
            found = asyncio.run(canonicalize_cached(cache, Host(), "python3", ARGVS, version="1"))
            assert found.ok
    assert len(asked) == 1
    assert len(written) == 1
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_http_clients_share_one_tls_context():
    async def contexts():
        clients = [
            Endpoint.forwarded("127.0.0.1", 30000 + index, f"/tmp/socket-{index}").client(5.0)
            for index in range(2)
        ] + [Endpoint("http://127.0.0.1:1").client(5.0), Endpoint("http://127.0.0.1:2").client(5.0)]
        try:
            return [client._transport._pool._ssl_context for client in clients]
        finally:
            for client in clients:
                await client.aclose()

    forwarded_one, forwarded_two, direct_one, direct_two = asyncio.run(contexts())
    assert forwarded_one is forwarded_two
    assert direct_one is direct_two

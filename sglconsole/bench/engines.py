"""The two ways to load a server for one level: the host's bench_serving, or the console's
generator."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sglconsole.actions.base import StageFailed
from sglconsole.bench import host_bench, loadgen, prompts, stats
from sglconsole.bench.model import CONSOLE_ENGINE, LevelResult, SweepSettings
from sglconsole.bench.prompts import PROMPT_KIND, IdRange
from sglconsole.bench.provenance import ServerFacts, local_address
from sglconsole.bench.vocab import read_vocabulary
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.ssh.connection import SshHost

Report = Callable[[int, int], None]
"""(done, total) requests of the running level."""


class HostEngine:
    prompts = PROMPT_KIND

    def __init__(
        self, ssh: SshHost, module: str, facts: ServerFacts, port: int, settings: SweepSettings
    ):
        self.ssh, self.name, self.facts, self.port, self.settings = (
            ssh,
            module,
            facts,
            port,
            settings,
        )

    async def level(self, concurrency: int, count: int, report: Report) -> LevelResult:
        # bench_serving runs its own warm-up and reports no per-request progress (--disable-tqdm)
        report(0, count)
        row = await host_bench.run_level(
            self.ssh,
            self.facts.python,
            self.name,
            local_address(self.facts.address),
            self.port,
            concurrency,
            count,
            self.settings,
            self.facts.tokenizer,
        )
        report(row.completed + row.failed, count)
        return row

    async def close(self) -> None:
        return None


class ConsoleEngine:
    name = CONSOLE_ENGINE

    def __init__(self, endpoint: Endpoint, settings: SweepSettings, slots: int, ids: IdRange):
        self.url = endpoint.url("/generate")
        self.settings = settings
        self.ids = ids
        self.prompts = ids.kind
        self.http = loadgen.client(endpoint, slots)

    async def level(self, concurrency: int, count: int, report: Report) -> LevelResult:
        await self.warm_up(concurrency)
        done = 0

        def finished(_record) -> None:
            nonlocal done
            done += 1
            report(done, count)

        report(0, count)
        bodies = prompts.bodies(self.settings, concurrency, count, self.ids)
        records, started, ended = await loadgen.run_level(
            self.http, self.url, bodies, concurrency, finished
        )
        return stats.summarise(concurrency, self.name, records, started, ended)

    async def warm_up(self, concurrency: int) -> None:
        """Short requests first, left out of the numbers: connections open, caches and graphs
        warm."""
        bodies = prompts.warmup_bodies(
            self.settings, min(self.settings.warmup, concurrency), self.ids
        )
        if not bodies:
            return
        outputs = await asyncio.gather(
            *(loadgen.stream_one(self.http, self.url, body) for body in bodies)
        )
        if not any(output.ok for output in outputs):
            raise StageFailed(f"the warm-up request failed: {outputs[0].error}")

    async def close(self) -> None:
        await self.http.aclose()


async def choose(
    ssh: SshHost, facts: ServerFacts, port: int, endpoint: Endpoint, settings: SweepSettings
):
    """auto: the host's own bench_serving when its SGLang has one, else the console's generator."""
    if settings.engine != "console":
        module = await host_bench.find_module(ssh, facts.python)
        if module is not None:
            return HostEngine(ssh, module, facts, port, settings)
        if settings.engine == "host":
            raise StageFailed(
                f"{facts.python} on {ssh.name} has no sglang.bench_serving (use --engine console)"
            )
    return ConsoleEngine(endpoint, settings, max(settings.levels), await id_range(ssh, facts))


async def id_range(ssh: SshHost, facts: ServerFacts) -> IdRange:
    """The ids the console's prompts may hold: inside the model's vocabulary, or no bench at all
    (an id past it crashes the server being measured)."""
    vocabulary = await read_vocabulary(ssh, facts.python, facts.model, facts.cwd, facts.env)
    if vocabulary.size is None:
        raise StageFailed(
            f"the model's vocabulary is not known ({vocabulary.source}): the console's generator "
            "sends token ids, and one past the vocabulary crashes SGLang's scheduler, so nothing "
            "was sent (give the model a config.json with vocab_size, or use --engine host)"
        )
    try:
        return IdRange.for_vocab(vocabulary.size)
    except ValueError as exc:
        raise StageFailed(f"{vocabulary.source}: {exc}; nothing was sent") from None

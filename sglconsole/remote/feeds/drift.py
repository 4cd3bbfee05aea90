"""The drift feed: each managed server's running argv compared with its profile's LaunchSpec,
once per server process (the host's SGLang judges; asking is not free: verdicts are cached)."""

from __future__ import annotations

from dataclasses import replace

from sglconsole.config.launch_spec import spec_for_profile
from sglconsole.errors import ActionError
from sglconsole.remote.drift import container_rows, drift_argvs, report_from
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.remote.parser_cache import ParserCache
from sglconsole.remote.sglang_args import canonicalize_remote
from sglconsole.state.fleet import ServerState


class DriftFeed:
    def __init__(self, link: HostLink, parser_cache: ParserCache):
        self.link = link
        self.parser_cache = parser_cache

    async def check(self, server: ServerState) -> None:
        process, profile = server.process, server.profile
        if process is None or profile is None:
            return
        # the saved side: the spec a relaunch of this server would start
        spec = spec_for_profile(self.link.name, server.config, server.profile_name, profile)
        python = process.python or spec.python
        try:
            argvs, notes = await drift_argvs(self.link.ssh, spec, process, server.version)
        except ActionError as exc:  # e.g. an unreadable --config file: unknown, never "same"
            server.drift, server.drift_error = None, str(exc)
            return
        cache = self.parser_cache
        key = cache.key(self.link.name, python, server.version, argvs)
        verdict = cache.get(key)
        if verdict is None:  # a cached verdict was written when it was asked: not again
            verdict = await canonicalize_remote(self.link.ssh, python, argvs)
            cache.put(key, verdict)
        if verdict.ok:
            report = report_from(verdict, spec, process, server.server_info, notes)
            rows = await container_rows(self.link.ssh, spec, process, server.version)
            server.drift = replace(report, container=rows)
            server.drift_error = None
        else:
            server.drift_error = verdict.error

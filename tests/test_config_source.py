"""hosts.yaml `source: {prometheus: URL}`: where the console reads the fleet's numbers."""

from __future__ import annotations

import pytest

from sglconsole import config
from sglconsole.errors import ConfigError

HOSTS = "hosts:\n  gpu1: {address: gpu1.example}\n"


def test_a_prometheus_source_is_read(tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS + "source: {prometheus: 'http://prom.example:9090/', interval: 2}\n")
    source = config.load(path).model.source
    assert source.prometheus == "http://prom.example:9090" and source.interval == 2
    path.write_text(HOSTS)
    assert config.load(path).model.source is None  # SSH to every host, as before


@pytest.mark.parametrize(
    "line,expected",
    [
        ("source: {prometheus: 'prom:9090'}", "expected an http(s) URL"),
        (
            "source: {prometheus: 'http://p:9090', interval: 0}",
            "source.interval: expected a value > 0",
        ),
        ("source: {prometheus: 'http://p:9090', intervall: 5}", "intervall"),
    ],
)
def test_a_bad_source_names_its_line(tmp_path, line, expected):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS + line + "\n")
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert f"{path}:3: " in str(info.value) and expected in str(info.value), str(info.value)


def test_label_mapping_defaults_fit_a_plain_scrape(tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS + "source: {prometheus: 'http://p:9090'}\n")
    labels = config.load(path).model.source.labels
    assert (labels.host, labels.port, labels.gpu_host, labels.gpu_index) == (
        "instance",
        "instance",
        "instance",
        "gpu",
    )
    path.write_text(
        HOSTS + "source:\n  prometheus: 'http://p:9090'\n"
        "  labels: {host: node, port: sglang_port, gpu_host: Hostname}\n"
    )
    labels = config.load(path).model.source.labels
    assert (labels.host, labels.port, labels.gpu_host) == ("node", "sglang_port", "Hostname")


@pytest.mark.parametrize(
    "labels,expected",
    [
        ("{host: 'no-dashes'}", "source.labels.host: expected a Prometheus label name"),
        ("{gpu_index: ''}", "source.labels.gpu_index: expected a Prometheus label name"),
        ("{hots: node}", "hots"),
    ],
)
def test_a_bad_label_mapping_names_its_line(tmp_path, labels, expected):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS + "source:\n  prometheus: 'http://p:9090'\n  labels: " + labels + "\n")
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert f"{path}:5: " in str(info.value) and expected in str(info.value), str(info.value)

"""hosts.yaml edits (capture, bench --save-baseline): one entry changes, every other byte stays.

A property test writes many hosts.yaml layouts (block scalars whose lines start with '#',
multi-line quoted and plain scalars, comments everywhere, CRLF, no final newline, 2 or 4
spaces, flow siblings), edits one entry, parses the result again and checks that the edited
entry has the new value, that the document is otherwise equal, and that every line outside
the edited entry is still there byte for byte.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglconsole import config
from sglconsole.config.edit import set_entry, update_file
from sglconsole.errors import ConfigError

# ------------------------------------------------------------------ the bugs, one by one


def test_a_literal_block_whose_last_line_starts_with_hash_keeps_that_line():
    text = (
        "profiles:\n"
        "  p:\n"
        "    args: [--model-path, /m]\n"
        "    description: |\n"
        "      first line\n"
        "      # not a comment: part of the text\n"
        "  q:\n"
        "    args: [--model-path, /q]\n"
    )
    out = set_entry(text, ("profiles", "p"), "baseline", {"gen_throughput": 50.0})
    data = yaml.safe_load(out)
    assert data["profiles"]["p"]["description"] == "first line\n# not a comment: part of the text\n"
    assert data["profiles"]["p"]["baseline"] == {"gen_throughput": 50.0}
    assert out.startswith(text.split("  q:\n")[0]) and out.endswith(
        "    baseline:\n      gen_throughput: 50.0\n  q:\n    args: [--model-path, /q]\n"
    )


def test_a_multi_line_quoted_scalar_does_not_absorb_the_new_entry():
    text = (
        "profiles:\n"
        "  p:\n"
        "    args: [--model-path, /m]\n"
        '    description: "a long description\n'
        '      that goes on"\n'
    )
    out = set_entry(text, ("profiles", "p"), "baseline", {"gen_throughput": 50.0})
    profile = yaml.safe_load(out)["profiles"]["p"]
    assert profile["description"] == "a long description that goes on"
    assert profile["baseline"] == {"gen_throughput": 50.0}
    assert out.startswith(text)


def test_replacing_a_baseline_keeps_the_literal_block_before_it():
    text = (
        "profiles:\n  p:\n    description: |\n      x\n      # y\n"
        "    baseline:\n      gen_throughput: 1.0   # old\n    args: [a]\n"
    )
    out = set_entry(text, ("profiles", "p"), "baseline", {"gen_throughput": 2.0})
    assert out == (
        "profiles:\n  p:\n    description: |\n      x\n      # y\n"
        "    baseline:\n      gen_throughput: 2.0\n    args: [a]\n"
    )


def test_a_crlf_file_stays_crlf():
    text = "# fleet\r\nprofiles:\r\n  p:\r\n    args: [a]\r\n  q:\r\n    args: [b]\r\n"
    added = set_entry(text, ("profiles", "p"), "baseline", {"levels": [{"concurrency": 1}]})
    assert added == (
        "# fleet\r\nprofiles:\r\n  p:\r\n    args: [a]\r\n    baseline:\r\n      levels:\r\n"
        "      - concurrency: 1\r\n  q:\r\n    args: [b]\r\n"
    )
    replaced = set_entry(added, ("profiles", "p"), "baseline", {"gen_throughput": 3.0})
    assert "\n" not in replaced.replace("\r\n", "")
    assert yaml.safe_load(replaced)["profiles"]["p"]["baseline"] == {"gen_throughput": 3.0}


def test_a_flow_style_profile_is_refused_naming_file_line_and_why():
    text = "hosts: {}\nprofiles:\n  a:\n    args: [x]\n  p: {args: [--model-path, /m]}\n"
    with pytest.raises(ConfigError) as caught:
        set_entry(text, ("profiles", "p"), "baseline", {"gen_throughput": 1.0}, "fleet.yaml")
    message = str(caught.value)
    assert message.startswith("fleet.yaml:5: profiles.p: ") and "flow style" in message
    assert "block" in message


def test_an_alias_is_refused_instead_of_editing_its_anchor():
    text = "profiles:\n  p: &p\n    args: [x]\n  q: *p\n"
    with pytest.raises(ConfigError) as caught:
        set_entry(text, ("profiles", "q"), "baseline", {"gen_throughput": 1.0}, "fleet.yaml")
    message = str(caught.value)
    assert message.startswith("fleet.yaml:4: profiles.q: ") and "alias (*p)" in message
    assert "line 2" in message


def test_an_anchored_profile_used_elsewhere_is_refused():
    text = "profiles:\n  p: &p\n    args: [x]\n  q:\n    <<: *p\n    workdir: /w\n"
    with pytest.raises(ConfigError) as caught:
        set_entry(text, ("profiles", "p"), "baseline", {"gen_throughput": 1.0}, "fleet.yaml")
    assert str(caught.value).startswith("fleet.yaml:2: profiles.p: ")
    assert "used again at line 5" in str(caught.value)
    # the profile that merges the anchor may be edited: its own keys win over the merged ones
    out = set_entry(text, ("profiles", "q"), "baseline", {"gen_throughput": 1.0})
    data = yaml.safe_load(out)["profiles"]
    assert data["q"]["baseline"] == {"gen_throughput": 1.0} and "baseline" not in data["p"]


def test_empty_and_missing_parents_become_blocks():
    assert set_entry("hosts: {}\nprofiles: {}   # none yet\n", ("profiles",), "p", {"a": 1}) == (
        "hosts: {}\nprofiles:\n  p:\n    a: 1\n"
    )
    assert set_entry("hosts: {}\nprofiles:\n", ("profiles",), "p", {"a": 1}) == (
        "hosts: {}\nprofiles:\n  p:\n    a: 1\n"
    )
    assert set_entry("hosts: {}", ("profiles",), "p", {"a": 1}) == (
        "hosts: {}\nprofiles:\n  p:\n    a: 1\n"
    )
    assert set_entry("# only a comment\n", ("profiles",), "p", 1) == (
        "# only a comment\nprofiles:\n  p: 1\n"
    )


def _hosts_with(profile_lines: str) -> str:
    return (
        "# the fleet\nhosts:\n  gpu1:\n    address: gpu1.lab.example\n"
        "    servers:\n      - {port: 30000, profile: p}\n"
        f"profiles:\n{profile_lines}"
    )


def _validate(path):
    return lambda text: config.parse(text, str(path))


def test_a_symlinked_hosts_yaml_stays_a_symlink_and_its_target_is_written(tmp_path: Path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "hosts.yaml"
    target.write_bytes(
        _hosts_with("  p:\n    args: [--model-path, /m]\n").replace("\n", "\r\n").encode()
    )
    target.chmod(0o640)
    link = tmp_path / "hosts.yaml"
    link.symlink_to(os.path.relpath(target, tmp_path))
    update_file(link, ("profiles", "p"), "baseline", {"gen_throughput": 9.0}, _validate(link))
    assert link.is_symlink() and os.readlink(link) == "dotfiles/hosts.yaml"
    data = target.read_bytes()
    assert b"\r\n    baseline:\r\n      gen_throughput: 9.0\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n")
    assert (target.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in dotfiles.iterdir()] == ["hosts.yaml"]  # no temporary file left


def test_an_edit_that_cannot_be_made_leaves_the_file_alone(tmp_path: Path):
    path = tmp_path / "hosts.yaml"
    original = _hosts_with("  p: {args: [--model-path, /m]}\n")
    path.write_text(original)
    with pytest.raises(ConfigError) as caught:
        update_file(path, ("profiles", "p"), "baseline", {"gen_throughput": 1.0}, _validate(path))
    assert str(caught.value).startswith(f"{path}:8: profiles.p: ")
    assert path.read_text() == original


# ------------------------------------------------------------ the property over many layouts

NAMES = ("alpha", "beta", "gamma")


@st.composite
def documents(draw):
    unit = draw(st.sampled_from([2, 4]))
    i1, i2, i3 = " " * unit, " " * 2 * unit, " " * 3 * unit

    def comment():
        return draw(
            st.sampled_from(["", "", f"{i2}# a comment\n", "\n", "# at column 0\n", f"{i3}#x\n"])
        )

    fields = {
        "args": draw(
            st.sampled_from(
                [
                    f"{i2}args: [--model-path, /m/x]  # inline\n",
                    f"{i2}args:\n{i3}- --model-path\n{i3}- /m/x\n",
                    f"{i2}args:\n{i2}- --tp\n{i2}- '2'\n",
                ]
            )
        ),
        "description": draw(
            st.sampled_from(
                [
                    f"{i2}description: plain text # a comment\n",
                    f'{i2}description: "quoted line one\n{i3}continued # not a comment"\n',
                    f"{i2}description: 'single\n\n{i3}more'   # c\n",
                    f"{i2}description: |\n{i3}line\n{i3}# not a comment\n",
                    f"{i2}description: |\n{i3}line\n\n{i3}# not a comment\n\n",
                    f"{i2}description: >-\n{i3}folded\n{i3}# hash\n\n",
                    f"{i2}description: |+\n{i3}keep\n\n",
                    f"{i2}description: |-\n{i3}strip\n{i3}  # deeper\n",
                    f"{i2}description: plain\n{i3}continues here\n",
                    f"{i2}description:\n",
                    f"{i2}description:   # nothing\n",
                ]
            )
        ),
        "env": draw(
            st.sampled_from(
                [
                    f"{i2}env:\n{i3}HF_TOKEN: ${{HF_TOKEN}}  # c\n{i3}# comment\n{i3}X: '1'\n",
                    f"{i2}env: {{A: '1', B: '2'}}\n",
                ]
            )
        ),
        "baseline": draw(
            st.sampled_from(
                [
                    "",
                    f"{i2}baseline:\n{i3}gen_throughput: 50  # old\n{i3}slow_fraction: 0.6\n",
                    f"{i2}baseline: {{gen_throughput: 5}}\n",
                    f"{i2}baseline:\n",
                    f"{i2}baseline: |\n{i3}# odd but legal\n",
                ]
            )
        ),
    }
    profiles = []
    for name in NAMES[: draw(st.integers(1, 3))]:
        order = draw(st.permutations(list(fields)))
        body = "".join(fields[key] + comment() for key in order)
        profiles.append(f"{i1}{name}:   # {name}\n{body}" if draw(st.booleans()) else body)
        if not profiles[-1].startswith(f"{i1}{name}:"):
            profiles[-1] = f"{i1}{name}:\n{body}"
    if draw(st.booleans()):  # a flow sibling: never edited, never touched
        profiles.insert(draw(st.integers(0, len(profiles))), f"{i1}flowy: {{args: [a, b]}}\n")
    text = draw(st.sampled_from(["", "# header\n\n", "---\n"]))
    text += f"hosts:\n{i1}gpu1:\n{i2}address: gpu1.example  # inline\n\n"
    text += "profiles:\n" + "".join(p + comment() for p in profiles)
    text += draw(st.sampled_from(["", "alert_command: [logger]\n", "# trailing\n", "\n\n"]))
    if draw(st.booleans()):
        text = text.rstrip("\n")
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["# hash", "a: b", "- x", "|", "${HF_TOKEN}", "line\nline", "  pad  "]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=12), inner, max_size=4),
    ),
    max_leaves=12,
)


def _last_content(node: yaml.Node) -> int:
    """Index of the last character that belongs to the node's content."""
    if isinstance(node, yaml.ScalarNode):
        if node.style in ("|", ">"):
            return node.end_mark.index - 1
        return max(node.end_mark.index - 1, node.start_mark.index)
    if node.flow_style or not node.value:
        return node.end_mark.index - 1
    last = node.value[-1]
    return _last_content(last[1] if isinstance(node, yaml.MappingNode) else last)


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def _entry(text: str, path: tuple[str, ...]):
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    key = None
    for part in path:
        if not isinstance(node, yaml.MappingNode):
            return None, None
        found = [(k, v) for k, v in node.value if k.value == part]
        if not found:
            return None, None
        key, node = found[-1]
    return key, node


def _same(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=documents(),
    name=st.sampled_from(NAMES + ("newprofile",)),
    key=st.sampled_from(["baseline", "description", "env", "args", "new_key"]),
    value=values,
)
def test_one_entry_changes_and_every_other_byte_stays(text, name, key, value):
    before = yaml.safe_load(text)
    if name not in before["profiles"]:
        name = "newprofile"
    crlf = "\r\n" in text
    try:
        out = set_entry(text, ("profiles", name), key, value)
    except ConfigError as exc:  # the one edit refused: a line after a final unbroken | block
        assert "ends the file without a line break" in str(exc)
        assert text.rstrip(" ")[-1] not in "\r\n" and text.rstrip(" ")[-1] != "}"
        assert (key not in (before["profiles"].get(name) or {})) or name == "newprofile"
        return

    # the edited entry has the new value; everything else parses as before
    after = yaml.safe_load(out)
    expected = before
    expected["profiles"].setdefault(name, {})
    expected["profiles"][name][key] = yaml.safe_load(yaml.safe_dump(value, sort_keys=False))
    assert _same(after, expected)

    # line endings as the file had them
    if crlf:
        assert out.count("\n") == out.count("\r\n")
    else:
        assert "\r" not in out.replace("\\r", "")

    # every line outside the edited entry is still there, in order, byte for byte
    old, new = _lines(text), _lines(out)
    key_node, value_node = _entry(text, ("profiles", name, key))
    if key_node is None:  # an insertion: the old lines are a prefix and a suffix of the new
        head = next((n for n, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
        head = len(old) if head is None else head
        assert new[:head] == old[:head] and new[len(new) - (len(old) - head) :] == old[head:]
    else:
        first = key_node.start_mark.line
        last = len(text[: _last_content(value_node) + 1].replace("\r\n", "\n").splitlines()) - 1
        assert new[:first] == old[:first]
        tail = old[last + 1 :]
        assert new[len(new) - len(tail) :] == tail
        # the edited key starts where it did
        assert new[first].startswith(old[first][: key_node.start_mark.column])

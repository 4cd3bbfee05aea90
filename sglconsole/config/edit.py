"""Edit one entry of hosts.yaml and leave every other byte as the user wrote it.

Round-trip YAML libraries keep comments but re-indent what they re-emit; an
operator's hosts.yaml deserves better. PyYAML's composer gives each node's
exact line span, so a mapping entry is replaced (or appended to its parent)
as a block of text; the rest of the file is untouched. The result is
validated before it is written (atomically).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from sglconsole.errors import ConfigError


def _node_at(root: yaml.Node, path: tuple[str, ...]) -> tuple[yaml.Node | None, yaml.Node | None]:
    """(key node, value node) of the mapping entry at `path` (None if missing)."""
    key_node, node = None, root
    for part in path:
        if not isinstance(node, yaml.MappingNode):
            return None, None
        match = next(
            ((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part),
            None,
        )
        if match is None:
            return None, None
        key_node, node = match
    return key_node, node


def _block_end(lines: list[str], value: yaml.Node, start: int) -> int:
    """The line after the entry: the value's last line, without trailing blank/comment lines."""
    mark = value.end_mark
    # a block node "ends" where the next token starts: if only indentation precedes the mark
    # on its line, the node's text stopped on the line before
    ends_inside = mark.line < len(lines) and lines[mark.line][: mark.column].strip() != ""
    end = max(mark.line + (1 if ends_inside else 0), start + 1)
    # blank and comment lines before the next entry belong to that entry, not to this one
    while end > start + 1 and (
        not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")
    ):
        end -= 1
    return end


def render(key: str, value: Any, indent: int) -> list[str]:
    text = yaml.safe_dump(
        {key: value}, sort_keys=False, default_flow_style=False, width=100, allow_unicode=True
    )
    pad = " " * indent
    return [pad + line if line else line for line in text.splitlines()]


def set_entry(text: str, parent: tuple[str, ...], key: str, value: Any) -> str:
    """`parent.key = value` in the YAML text, replacing the entry if it exists."""
    lines = text.splitlines()
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is None:
        return (
            "\n".join(render(key, value, 0)) + "\n"
            if not parent
            else set_entry("", (), parent[0], _nest(parent[1:], key, value))
        )
    key_node, value_node = _node_at(root, (*parent, key))
    if key_node is not None:
        start = key_node.start_mark.line
        end = _block_end(lines, value_node, start)
        new = lines[:start] + render(key, value, key_node.start_mark.column) + lines[end:]
        return "\n".join(new) + "\n"
    parent_key, parent_node = _node_at(root, parent) if parent else (None, root)
    if parent_node is None:
        return set_entry(text, parent[:-1], parent[-1], _nest((), key, value))
    if (
        not isinstance(parent_node, yaml.MappingNode)
        or parent_node.flow_style
        or not parent_node.value
    ):
        # `profiles: {}` or an empty/flow mapping: replace it with a block holding the new entry
        existing = (
            yaml.safe_load(yaml.serialize(parent_node))
            if isinstance(parent_node, yaml.MappingNode)
            else {}
        )
        return set_entry(text, parent[:-1], parent[-1], {**(existing or {}), key: value})
    children = [k for k, _ in parent_node.value]
    indent = children[0].start_mark.column
    last_value = parent_node.value[-1][1]
    end = _block_end(lines, last_value, parent_node.value[-1][0].start_mark.line)
    new = lines[:end] + render(key, value, indent) + lines[end:]
    return "\n".join(new) + "\n"


def _nest(path: tuple[str, ...], key: str, value: Any) -> dict:
    out: Any = {key: value}
    for part in reversed(path):
        out = {part: out}
    return out


def update_file(path: Path, parent: tuple[str, ...], key: str, value: Any, validate) -> str:
    """Apply set_entry to the file, check the result with `validate(text)`, write it atomically."""
    original = path.read_text(encoding="utf-8")
    updated = set_entry(original, parent, key, value)
    try:
        validate(updated)
    except ConfigError as exc:
        raise ConfigError(
            [f"{path}: the edit would make the file invalid; nothing was written:", *exc.problems]
        ) from None
    fd, tmp = tempfile.mkstemp(prefix=".hosts-", suffix=".yaml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(updated)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return updated

"""Edit one entry of hosts.yaml and leave every other byte as the user wrote it.

Round-trip YAML libraries keep comments but re-indent what they re-emit; an
operator's hosts.yaml deserves better. PyYAML's parser gives every node's exact
character span, so a mapping entry is replaced (or a new one inserted after its
last sibling) as a slice of text; every other character of the file, line
endings included, stays as it was. What cannot be edited that way is refused
with the file, the line and the reason: an entry written in flow style
(`p: {args: [...]}`), reached through an alias (`q: *p`, which would edit the
anchor), or anchored and reused elsewhere. The result is parsed again and must
equal the old document with just that entry changed; it is then validated and
written atomically, through a symlink to the file it points at.
"""

from __future__ import annotations

import copy
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sglconsole.errors import ConfigError

_NULLS = ("", "~", "null", "Null", "NULL")
_BREAKS = "\r\n"


@dataclass
class _Node:
    """One node of the document as written: where its text starts and where its content ends."""

    kind: str  # "scalar", "alias", "seq" or "map"
    start: int
    end: int  # just after the last character that belongs to the node
    line: int
    column: int
    value: str | None = None  # a scalar's text
    style: str | None = None
    tag: str | None = None
    anchor: str | None = None  # the anchor it defines, or (for an alias) the one it names
    flow: bool = False
    items: list[_Node] = field(default_factory=list)  # a mapping's are key, value, key, ...

    def pairs(self) -> list[tuple[_Node, _Node]]:
        return list(zip(self.items[0::2], self.items[1::2], strict=True))

    def walk(self):
        yield self
        for item in self.items:
            yield from item.walk()

    @property
    def is_null(self) -> bool:
        return (
            self.kind == "scalar" and self.style is None and not self.tag and self.value in _NULLS
        )


class _Document:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.root: _Node | None = None
        try:
            self._parse()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f"{mark.line + 1}:" if mark else ""
            raise ConfigError(
                f"{filename}:{line} cannot edit a file YAML cannot parse: {exc.problem}"
            ) from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{filename}: cannot edit a file YAML cannot parse: {exc}") from None
        nodes = list(self.root.walk()) if self.root else []
        self.aliases = [node for node in nodes if node.kind == "alias"]

    def _parse(self) -> None:
        stack: list[_Node] = []
        documents = 0
        for event in yaml.parse(self.text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise ConfigError(
                        f"{self.filename}:{event.start_mark.line + 1}: a second YAML document"
                        " (---): hosts.yaml is one document"
                    )
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                node = stack.pop()
                if node.flow or not node.items:
                    node.end = event.end_mark.index
                else:  # a block collection ends where its last item's content does
                    node.end = node.items[-1].end
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            mark = event.start_mark
            node = _Node(
                kind="scalar",
                start=mark.index,
                end=event.end_mark.index,
                line=mark.line,
                column=mark.column,
                anchor=event.anchor,
            )
            if isinstance(event, yaml.ScalarEvent):
                node.value, node.style, node.tag = event.value, event.style, event.tag
            elif isinstance(event, yaml.AliasEvent):
                node.kind = "alias"
            else:
                node.kind = "map" if isinstance(event, yaml.MappingStartEvent) else "seq"
                node.flow, node.tag = bool(event.flow_style), event.tag
            if stack:
                stack[-1].items.append(node)
            else:
                self.root = node
            if node.kind in ("map", "seq"):
                stack.append(node)

    # ------------------------------------------------------------ text positions

    def line_start(self, index: int) -> int:
        return max(self.text.rfind("\n", 0, index), self.text.rfind("\r", 0, index)) + 1

    def column(self, node: _Node) -> int:
        # the byte-order mark is read as a character of the first line: it indents nothing
        return node.column - (1 if node.line == 0 and self.text.startswith("\ufeff") else 0)

    def after(self, index: int, where: str) -> int:
        """Where the line holding the content end `index` ends: past its line break, over a
        trailing comment. A block scalar's content already ends at a line start."""
        text = self.text
        if index == 0 or text[index - 1] in _BREAKS:
            return index
        cut = len(text)
        for brk in _BREAKS:
            found = text.find(brk, index)
            if found != -1:
                cut = min(cut, found)
        rest = text[index:cut].strip(" \t")
        if rest and not rest.startswith("#"):
            raise self.refuse(
                index, where, f"more follows it on its line ({rest[:30]!r}): edit it by hand"
            )
        if text.startswith("\r\n", cut):
            return cut + 2
        return min(cut + 1, len(text))

    def line_of(self, index: int) -> int:
        text = self.text[:index]
        return text.count("\n") + text.count("\r") - text.count("\r\n") + 1

    def refuse(self, index: int, where: str, why: str) -> ConfigError:
        return ConfigError(f"{self.filename}:{self.line_of(index)}: {where}: {why}")

    # ------------------------------------------------------------ what may be edited

    def reused(self, node: _Node, *, inside: bool) -> _Node | None:
        """An alias elsewhere in the file naming the anchor of `node` (or, `inside`, of any node
        in it: a replaced entry takes its anchors with it)."""
        nodes = node.walk() if inside else [node]
        names = {inner.anchor for inner in nodes if inner.kind != "alias" and inner.anchor}
        return next(
            (
                alias
                for alias in self.aliases
                if alias.anchor in names and not node.start <= alias.start < node.end
            ),
            None,
        )

    def check_editable(self, node: _Node, where: str, *, container: bool) -> None:
        """Refuse an alias, a node whose anchor is used again, and (for the mapping an entry is
        saved into) a flow mapping or something that is no mapping at all."""
        if node.kind == "alias":
            anchored = (other for other in self.root.walk() if other.kind != "alias")
            anchor = next((other for other in anchored if other.anchor == node.anchor), None)
            source = f" (line {anchor.line + 1})" if anchor else ""
            raise self.refuse(
                node.start,
                where,
                f"is an alias (*{node.anchor}) of the entry anchored &{node.anchor}{source}:"
                " editing it would change that entry too; write it out in full to edit it",
            )
        alias = self.reused(node, inside=not container or node.is_null)
        if alias is not None:
            raise self.refuse(
                node.start,
                where,
                f"holds the anchor &{alias.anchor}, used again at line {alias.line + 1}"
                f" (*{alias.anchor}): editing it would change that entry too; edit it by hand",
            )
        if container and node.flow and node.items:
            raise self.refuse(
                node.start,
                where,
                "is written in flow style ({...} on one line); sglconsole only edits block"
                " mappings (one key per line): rewrite it as a block to save into it",
            )
        if container and not (node.kind == "map" or node.is_null):
            raise self.refuse(node.start, where, "is not a mapping: nothing can be saved into it")

    def check_unbroken_end(self, node: _Node, where: str) -> None:
        """A block scalar (| or >) ending the file with no line break: one more line after it
        would add a line break to its text (unless it strips them: |-)."""
        while node.kind in ("map", "seq") and not node.flow and node.items:
            node = node.items[-1]
        if node.kind != "scalar" or node.style not in ("|", ">"):
            return
        header = self.text[node.start :].split("\n", 1)[0].split("#", 1)[0]
        if "-" not in header:
            raise self.refuse(
                node.start,
                where,
                f"its last entry is a block scalar ({node.style}) that ends the file without a"
                " line break: anything written after it would add one to its text; end the file"
                " with a line break and run again",
            )

    def entry_start(self, key: _Node, where: str) -> int:
        prefix = self.text[self.line_start(key.start) : key.start]
        if prefix.strip(" \ufeff"):
            raise self.refuse(
                key.start,
                where,
                f"is written in a layout sglconsole does not rewrite ({prefix.strip()!r}"
                " before the key): edit it by hand",
            )
        return key.start


# ---------------------------------------------------------------------- the edit


def render(key: str, value: Any, indent: int) -> list[str]:
    entry = {key: value}
    text = yaml.safe_dump(
        entry, sort_keys=False, default_flow_style=False, width=100, allow_unicode=True
    )
    if not _same(yaml.safe_load(text), yaml.safe_load(yaml.safe_dump(entry, sort_keys=False))):
        # PyYAML writes some characters (U+0085) raw that it then reads as a line break:
        # such a value is written with escapes instead
        text = yaml.safe_dump(entry, sort_keys=False, default_flow_style=False, width=100)
    pad = " " * indent
    # only \n: str.splitlines() would also split at a U+0085 or U+2028 inside a value
    return [pad + line if line else line for line in text.rstrip("\n").split("\n")]


def _block(key: str, value: Any, indent: int, *, first_padded: bool) -> str:
    lines = render(key, value, indent)
    lines[0] = lines[0] if first_padded else lines[0][indent:]
    return "\n".join(lines) + "\n"


def _newline(text: str) -> str:
    """The file's own line ending (that of its first line)."""
    for index, char in enumerate(text):
        if char == "\n":
            return "\n"
        if char == "\r":
            return "\r\n" if text.startswith("\n", index + 1) else "\r"
    return "\n"


def _nest(path: tuple[str, ...], key: str, value: Any) -> dict:
    out: Any = {key: value}
    for part in reversed(path):
        out = {part: out}
    return out


def _plan(doc: _Document, parent: tuple[str, ...], key: str, value: Any) -> tuple[int, int, str]:
    """(start, end, new text) of the one slice of the file to replace."""
    text, full = doc.text, (*parent, key)
    root = doc.root
    top = _nest(full[1:-1], key, value) if full[1:] else value
    if root is None:  # nothing (or only comments) yet: append
        lead = "\n" if text and text[-1] not in _BREAKS else ""
        return len(text), len(text), lead + _block(full[0], top, 0, first_padded=True)
    if root.is_null:  # `~` alone
        end = doc.after(root.end, "the file")
        return root.start, end, _block(full[0], top, 0, first_padded=True)
    if root.kind != "map":
        raise doc.refuse(root.start, "the file", "the top is not a mapping: nothing can be saved")
    node, owner = root, None  # owner: the (key, path) entry whose value `node` is
    for depth, part in enumerate(full):
        here = ".".join(full[:depth]) or "the top level"
        doc.check_editable(node, here, container=True)
        rest = _nest(full[depth + 1 : -1], key, value) if depth < len(full) - 1 else value
        if node.is_null or not node.items:  # `profiles:` or `profiles: {}`: a block replaces it
            if owner is None:
                new = _block(part, rest, 0, first_padded=True)
                return node.start, doc.after(node.end, here), new
            owner_key, owner_name = owner
            start = doc.entry_start(owner_key, here)
            new = _block(owner_name, {part: rest}, doc.column(owner_key), first_padded=False)
            return start, doc.after(node.end, here), new
        match = [
            pair for pair in node.pairs() if pair[0].kind == "scalar" and pair[0].value == part
        ]
        if not match:  # insert the new entry after the mapping's last one
            first_key = node.items[0]
            spot = doc.after(node.items[-1].end, here)
            lead = "\n" if spot and text[spot - 1] not in _BREAKS else ""
            if lead:
                doc.check_unbroken_end(node.items[-1], here)
            return spot, spot, lead + _block(part, rest, doc.column(first_key), first_padded=True)
        owner = match[-1][0], part  # a duplicated key: the last one is the one that counts
        node = match[-1][1]
    where = ".".join(full)
    doc.check_editable(node, where, container=False)
    owner_key = owner[0]
    start = doc.entry_start(owner_key, where)
    new = _block(key, value, doc.column(owner_key), first_padded=False)
    return start, doc.after(node.end, where), new


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, dict) and isinstance(want, dict):
        return list(got) == list(want) and all(_same(got[key], want[key]) for key in got)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(_same(*pair) for pair in zip(got, want, strict=True))
    if isinstance(got, float) and isinstance(want, float) and math.isnan(got) and math.isnan(want):
        return True
    return type(got) is type(want) and got == want


def _expected(text: str, parent: tuple[str, ...], key: str, value: Any) -> Any:
    data = copy.deepcopy(yaml.safe_load(text)) or {}
    here = data
    for part in parent:
        if not isinstance(here.get(part), dict):
            here[part] = {}
        here = here[part]
    here[key] = yaml.safe_load(yaml.safe_dump(value, sort_keys=False))
    return data


def set_entry(
    text: str, parent: tuple[str, ...], key: str, value: Any, filename: str = "hosts.yaml"
) -> str:
    """`parent.key = value` in the YAML text, replacing the entry if it exists.

    Raises ConfigError (file:line: where: why) for what cannot be edited in place."""
    doc = _Document(text, filename)
    start, end, new = _plan(doc, parent, key, value)
    newline = _newline(text)
    if newline != "\n":
        new = new.replace("\n", newline)
    updated = text[:start] + new + text[end:]
    try:
        same = _same(yaml.safe_load(updated), _expected(text, parent, key, value))
    except (yaml.YAMLError, AttributeError, TypeError):
        same = False
    if not same:  # a guard: the splice must change that one entry and nothing else
        raise doc.refuse(
            start,
            ".".join((*parent, key)),
            "cannot be rewritten without changing other entries; nothing was written:"
            " edit it by hand",
        )
    return updated


def update_file(path: Path, parent: tuple[str, ...], key: str, value: Any, validate) -> str:
    """set_entry, checked with `validate(text)`, written atomically (through a symlink)."""
    return update_entries(path, [(parent, key, value)], validate)


def update_entries(path: Path, edits: list[tuple[tuple[str, ...], str, Any]], validate) -> str:
    """update_file for several entries at once: all of them are written, or none."""
    target = Path(os.path.realpath(path))
    original = target.read_bytes().decode("utf-8")  # bytes: keep \r\n as written
    updated = original
    for parent, key, value in edits:
        updated = set_entry(updated, parent, key, value, str(path))
    try:
        validate(updated)
    except ConfigError as exc:
        raise ConfigError(
            [f"{path}: the edit would make the file invalid; nothing was written:", *exc.problems]
        ) from None
    descriptor, tmp = tempfile.mkstemp(prefix=".hosts-", suffix=".yaml", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(updated.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, target.stat().st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return updated

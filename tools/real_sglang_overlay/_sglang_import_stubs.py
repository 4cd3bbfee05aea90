"""Permissive stand-ins for the third-party modules an older SGLang's import chain needs.

The flag table of a release is dumped from its real parser (tools/gen_flag_table.py)
on a CPU-only machine: the release's unpacked wheel first on sys.path of the 0.5.23
real-SGLang venv (tools/real_sglang_venv.sh). What that release imports and the venv
lacks (transformers, xgrammar, ... or has in an incompatible version: triton) is
replaced by a stand-in module here: every submodule and attribute exists, calling,
subclassing or decorating with it does nothing. ``install(names)`` puts the finder
first on ``sys.meta_path`` for those top-level names only; SGLang's own modules, torch
and the standard library are never stood in for (``NEVER``). Which names are needed
is found by tools/real_sglang_overlay/flag_table.py, and recorded in the table.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

NEVER = frozenset({"sglang", "torch"}) | frozenset(sys.stdlib_module_names)
MARK = "SGLCONSOLE_STAND_IN"  # the text a stand-in value is, should one reach a table
STUB_VERSION = "999.0.0"  # what a stand-in says its __version__ is (passes >= checks)
BOUND = ("__func__", "__self__")  # a stand-in method is a bound one too: patching code reads these


class _StubMeta(type):
    """Class attributes a stand-in base would have had (``Model.model_rebuild()``)."""

    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything(f"{cls.__name__}.{name}")


class _StubBase(metaclass=_StubMeta):
    """What a class built on a stand-in derives from: takes any class keywords, any args."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__()

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything(f"{type(self).__name__}().{name}")


class _Anything(str):
    """Any attribute, call, item, base class, decorator or annotation: a stand-in again.

    A ``str`` underneath (``MARK``, an identifier: typing takes it as a forward reference,
    json.dumps and format take it; a table holding it shows a stand-in leaked into it),
    yet falsy, empty and without items.
    """

    def __new__(cls, name: str):
        self = super().__new__(cls, MARK)
        object.__setattr__(self, "_name", name)
        return self

    def __getattr__(self, name: str):
        if name in ("__name__", "__qualname__"):
            return self._name.rsplit(".", 1)[-1]
        if name.startswith("__") and name.endswith("__") and name not in BOUND:
            raise AttributeError(name)  # protocols Python probes for stay absent
        return _Anything(f"{self._name}.{name}")

    def __call__(self, *args, **kwargs):
        return _Anything(f"{self._name}()")

    def __getitem__(self, key):
        return _Anything(f"{self._name}[]")

    def __setitem__(self, key, value):
        pass

    def __setattr__(self, name, value):
        pass

    def __contains__(self, item):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return other is self

    def __hash__(self):
        return id(self)

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __mro_entries__(self, bases):
        # as a base class: a fresh permissive class (two stand-ins never clash as bases)
        metas = [type(b) for b in bases if isinstance(b, type) and type(b) is not type]
        meta = _StubMeta
        if metas:  # beside a real base with its own metaclass (ABCMeta, ...): derive from both
            meta = type("StandInMeta", (_StubMeta, *dict.fromkeys(metas)), {})
        name = self._name.rsplit(".", 1)[-1]
        return (meta(name, (_StubBase,), {"__module__": "stand-in"}),)

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __repr__(self):
        return f"<stand-in {self._name}>"


class _Stub(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything(f"{self.__name__}.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        if any(".".join(parts[:n]) in self.names for n in range(1, len(parts) + 1)):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Stub(spec.name)
        module.__path__ = []
        module.__version__ = STUB_VERSION
        return module

    def exec_module(self, module):
        pass


_FINDER: _Finder | None = None


_ATTRS: set[str] = set()


def install(names) -> None:
    """Stand in for these from now on (adds to what is already stood in).

    ``pkg`` or ``pkg.sub``: that module and everything under it (a real ``pkg`` keeps
    its other submodules); ``pkg.mod:attr``: one attribute the real ``pkg.mod`` lacks.
    """
    global _FINDER
    bad = sorted(n for n in names if n.split(".")[0].split(":")[0] in NEVER)
    if bad:
        raise ValueError(f"never stood in for: {', '.join(bad)}")
    if _FINDER is None:
        _FINDER = _Finder(())
        sys.meta_path.insert(0, _FINDER)
    _FINDER.names |= {n for n in names if ":" not in n}
    for name in sorted(n for n in names if ":" in n):
        module_name, attr = name.split(":")
        module = importlib.import_module(module_name)
        if not hasattr(module, attr):
            setattr(module, attr, _Anything(f"{module_name}.{attr}"))
        _ATTRS.add(name)


def stubbed() -> list[str]:
    return sorted((_FINDER.names if _FINDER else set()) | _ATTRS)


def top(name: str) -> str:
    return name.split(":")[0].split(".")[0]

"""A stand-in torchvision: PyPI has no CPU build for the 0.5.23 venv's torch 2.13.0+cpu.

sglang 0.5.17 imports ``torchvision.io.decode_jpeg`` (and transformers its
image helpers) on the way to ``ServerArgs.add_cli_args``; nothing there calls
them. Loaded by a .pth line in the overlay venv only, never elsewhere: every
``torchvision`` submodule and attribute exists and does nothing.
"""

import importlib.abc
import importlib.machinery
import sys
import types

STUBBED = ("torchvision",)


class _Anything:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything(f"{self._name}.{name}")

    def __call__(self, *args, **kwargs):
        return _Anything(f"{self._name}()")

    def __getitem__(self, key):
        return _Anything(f"{self._name}[]")

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (object,)

    def __repr__(self):
        return f"<stub {self._name}>"


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything(f"{self.__name__}.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Stub(spec.name)
        module.__path__ = []
        module.__version__ = "0.0+stub"
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())

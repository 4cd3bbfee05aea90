"""Data files shipped with sglconsole and read as data (no code here).

flags/sglang-X.json: SGLang's server flags per version, generated from the real
``ServerArgs.add_cli_args`` by tools/gen_flag_table.py. The simulator builds its
parser from them; `argdiff` reads them when SGLang is not importable locally.

envs/sglang-X.json: the environment variables each release reads (its ``Envs`` registry,
aliases, deprecations, names read elsewhere), from its own sglang/srt/environ.py by
tools/gen_env_table.py. Drift judges SGLANG_* variables by them when the host's own source
cannot be read; the simulator asks them what a release does with SGLANG_ENABLE_SPEC_V2.
"""

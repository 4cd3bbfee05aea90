"""Data files shipped with sglconsole and read as data (no code here).

flags/sglang-X.json: SGLang's server flags per version, generated from the real
``ServerArgs.add_cli_args`` by tools/gen_flag_table.py. The simulator builds its
parser from them; `argdiff` reads them when SGLang is not importable locally.
"""

"""Profile benchmarking: sweep a server over concurrency levels, compare profiles, keep baselines.

The face imports nothing: each caller imports the module it uses, so importing one bench
module (the quick bench's action, the decode figures) never loads the rest, and no module
of this room reaches its siblings through a half-initialised package. For a UI (all async,
over an ActionContext whose `progress` receives the stages):

    from sglconsole.bench.sweep import run_sweep          # SweepProgress per request and level
    from sglconsole.bench.compare import run_compare
    from sglconsole.bench.baseline import save as save_baseline

    result = await run_sweep(ctx, host, port, [1, 8, 32], settings=SweepSettings(output_len=256),
                             progress=on_progress)
    compared = await run_compare(ctx, host, port, ["drifted", "proven"], settings=...,
                                 progress=on_progress)
    save_baseline(ctx.config.path, "proven", result, ctx.config.profiles["proven"].baseline)
"""

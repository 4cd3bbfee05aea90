#!/bin/bash
# check.sh: the kit's smoke test on the device (no SGLang server is started): install, import SGLang and the
# modules the server loads, start the SSH server, run the console from this working tree. ~1-2 min.
set -u
R=$(pwd); K=$R/.h200; A=/root/vcheck; rm -rf $A; mkdir -p $A
OUT=${OUT:-/tmp/check-out}; mkdir -p $OUT
BUDGET_S=${BUDGET_S:-220}
source $K/lib.sh
trap 'cp $A/* $OUT/ 2>/dev/null' EXIT
install_all || exit 1
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; python3 -V; command -v nvcc ninja gcc; nvcc --version | tail -1
echo "== venv python: $($PY -V 2>&1) at $PY"
t0=$(date +%s)
$PY -c "import sglang, sglang.srt.server_args; print('sglang', sglang.__version__, sglang.__file__)" 2>&1 | tail -5; echo "rc=${PIPESTATUS[0]} ($(( $(date +%s) - t0 ))s)"
$PY - <<'PYX' 2>&1 | grep -v -i warn | tail -40
import importlib, time
for m in ["torch", "triton", "transformers", "tokenizers", "flashinfer", "sgl_kernel", "xgrammar", "tvm_ffi", "fastapi", "uvicorn", "pydantic", "zmq", "openai", "huggingface_hub"]:
    try:
        mod = importlib.import_module(m)
        print("%-16s %s" % (m, getattr(mod, "__version__", "?")))
    except Exception as e:
        print("%-16s IMPORT FAILED: %r" % (m, e))
import torch
print("cuda", torch.version.cuda, "available", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
for m in ["sglang.launch_server", "sglang.srt.entrypoints.http_server", "sglang.srt.managers.scheduler",
          "sglang.srt.model_executor.model_runner", "sglang.srt.models.qwen3", "sglang.srt.layers.sampler",
          "sglang.srt.speculative.ngram_worker", "flashinfer.sampling", "flashinfer.norm"]:
    t = time.time()
    try:
        importlib.import_module(m); print("import %-44s ok %.1fs" % (m, time.time() - t))
    except Exception as e:
        print("import %-44s FAILED %r" % (m, e))
import flashinfer, os
d = os.path.join(os.path.dirname(flashinfer.__file__), "data")
print("flashinfer data:", sorted(os.listdir(d)))
PYX
echo "== tokenizer"; $PY -c "
from transformers import AutoTokenizer; t = AutoTokenizer.from_pretrained('/opt/tiny'); print(type(t).__name__, len(t), t('What is 2+2?').input_ids)" 2>&1 | tail -2
echo "== console from the working tree"
start_sshd
mkhosts "$COMMON $NGRAM" /root/hosts.yaml
SGC --help | head -5; SGC --version 2>&1 | head -2
PYTHONPATH=/opt/sgc python3 -c "import asyncssh, textual, httpx, rich, yaml, pydantic, prometheus_client; print('asyncssh', asyncssh.__version__, 'textual', textual.__version__, 'httpx', httpx.__version__, 'pydantic', pydantic.VERSION, 'prometheus_client ok')"
SGC_TIMEOUT=60 r check_status_json SGC status --json; echo "status --json: $(tail -1 $A/rcs.txt)"; brief $A/check_status_json.out
SGC_TIMEOUT=30 r check_status SGC status; cat $A/check_status.out | head -20; tail -5 $A/check_status.err
echo "== sshd log"; tail -5 /root/logs/sshd.log
echo "check done in $(( $(date +%s) - START ))s"

#!/bin/bash
# build_kit.sh [KITDIR]: rebuild the real-GPU kit (default: .h200/ of this checkout, git-ignored) in one command.
# Needs internet (pip's index), /work/wheels/sglang-0.5.17-*.whl and the shared recipe /work/shared/tools/real-gpu/
# (repack.py, mk_tiny.py, tiny-model/). Work files go to $H200_BUILD (default /tmp/h200build; downloads are reused).
# Makes: site.tar.xz (SGLang 0.5.17 + what the H200 image lacks), fi_data.tar.xz (flashinfer's JIT sources),
# sgc.tar.xz (the console's runtime deps, pinned by constraints.txt), tiny/ (4,096-token random Qwen3),
# and copies tools/real_gpu/*.sh *.py next to them. Total must stay well under the 64 MiB carry limit.
set -euo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
K=${1:-$R/.h200}
B=${H200_BUILD:-/tmp/h200build}
S=${SHARED_REAL_GPU:-/work/shared/tools/real-gpu}
SGLANG_WHEEL=${SGLANG_WHEEL:-$(ls /work/wheels/sglang-0.5.17-*.whl | head -1)}
PY312=${PY312:-$(ls /root/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)}
[ -x "${PY312:-}" ] || PY312=$(command -v python3.12)  # any CPython 3.12 (only to train the tokenizer)
PIP="python3 -m pip"
TARGET="--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
  --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
  --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64
  --platform manylinux_2_34_x86_64 --platform manylinux_2_35_x86_64"
say() { echo "[build_kit $(date +%T)] $*"; }
mkdir -p "$B"/dl "$B"/whl "$B"/sgcdl "$K"

# 1. SGLang's wheel: the release's own (cp311-tagged only because of three Rust/gRPC extensions we drop), repacked
#    without them and without multimodal_gen/, re-tagged py3-none-any so it installs on the box's Python 3.12.
say "sglang from $SGLANG_WHEEL"
python3 "$S/repack.py" "$SGLANG_WHEEL" "$B/whl/sglang-tmp.whl" '\.so$' '^sglang/multimodal_gen/' '/__pycache__/'
python3 - "$B/whl/sglang-tmp.whl" "$B/whl/sglang-0.5.17-py3-none-any.whl" <<'PYX'
import sys, zipfile
src, dst = sys.argv[1:]
zi, zo = zipfile.ZipFile(src), zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=9)
for info in zi.infolist():
    data = zi.read(info.filename)
    if info.filename.endswith(".dist-info/WHEEL"):
        lines = [l for l in data.decode().splitlines() if not l.startswith(("Tag:", "Root-Is-Purelib:"))]
        data = ("\n".join(lines) + "\nRoot-Is-Purelib: true\nTag: py3-none-any\n").encode()
    zo.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
zo.close()
PYX
rm -f "$B/whl/sglang-tmp.whl"

# 2. What the image lacks (its own list: /work/.library/device/KINDS.md), as cp312 wheels, no deps resolved.
SITE_PKGS="sglang-kernel==0.4.5 flashinfer-python==0.6.15.post1 transformers==5.12.1 tokenizers==0.22.2
  xgrammar==0.2.1 apache-tvm-ffi==0.1.11 zstandard==0.25.0 fastapi==0.135.0 starlette==0.52.1 uvicorn==0.55.0
  pydantic==2.14.4 pydantic_core==2.50.5 annotated_types==0.8.0 typing_extensions==4.16.0 typing_inspection==0.4.5
  orjson==3.13.0 msgspec==0.23.0 pyzmq==27.3.0 pybase64==1.5.1 setproctitle==1.3.8 partial_json_parser==0.2.1.1.post7
  interegular==0.3.3 openai==2.6.1 jiter==0.19.0 distro==1.9.0 sniffio==1.3.1 dill==0.4.1 gguf==0.19.0
  jsonschema==4.26.0 jsonschema_specifications==2025.9.1 referencing==0.37.0 rpds_py==2026.9.1 soundfile==0.13.1
  cffi==2.1.1 pycparser==3.12 compressed_tensors==0.15.0 loguru==0.7.3 easydict==1.14 ipython==9.18.1
  ipython_pygments_lexers==1.1.1 asttokens==3.0.2 decorator==5.3.1 executing==2.3.0 matplotlib_inline==0.2.2
  pexpect==4.9.0 prompt_toolkit==3.0.53 ptyprocess==0.7.0 pure_eval==0.2.4 stack_data==0.6.3 traitlets==5.16.1
  wcwidth==0.9.4 python_multipart==0.0.34"
say "downloading the site wheels"
$PIP download -q --no-deps $TARGET -d "$B/dl" $SITE_PKGS 2>&1 | grep -v "^WARNING: Location" || true
for p in $SITE_PKGS; do n=${p%%==*}; n=${n//-/_}; ls "$B"/dl/ | grep -qi "^${n}-${p##*==}-" || { echo "MISSING wheel $p"; exit 1; }; done

# 3. Strip what a tiny model with --attention-backend triton never loads.
say "repacking"
for w in "$B"/dl/*.whl; do
  b=$(basename "$w")
  case $b in
    sglang_kernel-*) python3 "$S/repack.py" "$w" "$B/whl/$b" 'flash_ops' 'flashmla_ops' 'infllm_ops' '/sm100/' ;;
    xgrammar-*) python3 "$S/repack.py" "$w" "$B/whl/$b" '\.a$' ;;
    zstandard-*) python3 "$S/repack.py" "$w" "$B/whl/$b" '_cffi' ;;
    *) cp "$w" "$B/whl/$b" ;;
  esac
done

# 4. Install into one folder (no pip on the box), strip debug info of xgrammar's library, split flashinfer's data/.
say "installing into $B/site"
rm -rf "$B/site" "$B/fi"
$PIP install -q --no-deps --no-index --no-compile --target "$B/site" $TARGET "$B"/whl/*.whl 2>&1 | grep -v "^WARNING: Location" || true
python3 -c "import sys; sys.path.insert(0, '$B/site'); import importlib.metadata as m; print('sglang', m.version('sglang'))"
find "$B/site/xgrammar" -name '*.so' -exec strip --strip-debug {} +
find "$B/site" -name __pycache__ -type d -prune -exec rm -rf {} +
mkdir -p "$B/fi/data"
( cd "$B/site/flashinfer/data" && cp -r --parents include csrc cutlass/include cutlass/tools/util/include \
    cccl/cub cccl/libcudacxx cccl/thrust spdlog "$B/fi/data/" )
rm -rf "$B/site/flashinfer/data"
say "packing site.tar.xz, fi_data.tar.xz"
XZ_OPT=-9e tar -cJf "$K/site.tar.xz" -C "$B/site" .
XZ_OPT=-9e tar -cJf "$K/fi_data.tar.xz" -C "$B/fi" data

# 5. The console's runtime dependencies, as constraints.txt pins them, with their dependencies, for cp312.
say "console deps (sgc.tar.xz)"
SGC_REQS="textual asyncssh httpx rich pyyaml pydantic prometheus-client packaging setproctitle argcomplete sniffio"
$PIP download -q $TARGET -c "$R/constraints.txt" -d "$B/sgcdl" $SGC_REQS 2>&1 | grep -v "^WARNING: Location" || true
rm -rf "$B/sgc"
$PIP install -q --no-deps --no-index --no-compile --target "$B/sgc" $TARGET "$B"/sgcdl/*.whl 2>&1 | grep -v "^WARNING: Location" || true
find "$B/sgc" -name __pycache__ -type d -prune -exec rm -rf {} +
XZ_OPT=-9e tar -cJf "$K/sgc.tar.xz" -C "$B/sgc" .

# 6. The tiny model: shared tiny-model/ config + mk_tiny.py (byte-level BPE trained here on text of this machine).
say "tiny model"
if [ ! -x "$B/tokvenv/bin/python" ]; then
  "$PY312" -m venv "$B/tokvenv"
  "$B/tokvenv/bin/python" -m pip install -q tokenizers==0.22.2 2>&1 | grep -v "^WARNING: Location" || true
fi
mkdir -p /tmp/sg/tiny
sed -e "s#PROJECT#$R#" -e "s#(local python)#$(dirname "$(dirname "$PY312")")#" -e 's#python3.11#python3.12#' \
  "$S/mk_tiny.py" > "$B/mk_tiny.py"
"$B/tokvenv/bin/python" "$B/mk_tiny.py"
rm -rf "$K/tiny" && cp -r /tmp/sg/tiny "$K/tiny"
for f in "$S"/tiny-model/*; do [ -e "$K/tiny/$(basename "$f")" ] || cp "$f" "$K/tiny/"; done
chmod -R u+w "$K/tiny"

# 7. The scripts that run on the box.
cp "$R"/tools/real_gpu/*.sh "$R"/tools/real_gpu/*.py "$K/"
say "done: $(du -sh "$K" | cut -f1) in $K"
ls -la "$K" "$K/tiny"

#!/bin/bash
# verify24.sh: ONE device call (nvidia-h200) recording raw facts for issue #24 on real SGLang 0.5.17, with the
# console from this working tree. Every step's failure is recorded and the script goes on; BUDGET_S bounds it.
#   e. the host-side registry read: sglang/srt/environ.py of the installed 0.5.17 (path, Envs names) - while A starts
#   c. preflight (`check`, `check --against`) of a profile carrying --enable-double-sparsity (0.5.9: yes, 0.5.17: no)
#   a. server A = the profile (tiny Qwen3, NGRAM) + light greedy load; `status --watch --json` for ~60 s; then the
#      whole log and its lines mentioning `deprecated` (all, and those written while the console watched)
#   b. `diff` (text + --json) of A against its profile, and against one differing ONLY in env SGLANG_ENABLE_SPEC_V2=1
#   d. server B launched with `--config /root/x.yaml` (some of the flags in YAML; ConfigArgumentMerger merges them):
#      /server_info, the console's diff of it; startup milestone lines of both logs; /metrics startup-time families
# Run from the repo root (the `run` tool: carry [".h200"], timeout_s 600):
#   cp tools/real_gpu/*.sh tools/real_gpu/*.py .h200/; PYTHONUNBUFFERED=1 bash .h200/verify24.sh 2>&1
# $OUT (<= 8 files): facts24.txt (everything, by step), steps.txt, watch_json.txt, sglang-30000.log,
# sglang-30001.log, verify24.tgz (all of /root/v24: every command's out/err/rc, hosts files, snapshots).
set -u
R=$(pwd); K=$R/.h200; A=/root/v24; rm -rf $A; mkdir -p $A
OUT=${OUT:-/tmp/v24-out}; mkdir -p $OUT
BUDGET_S=${BUDGET_S:-530}
source $K/lib.sh
F=$A/facts24.txt; LOGB=/root/logs/sglang-30001.log; URLB=http://127.0.0.1:30001
PA=""; PB=""; LP=""; WJ=""
sec() { { echo; echo "##### $* [$(date +%T) +$(( $(date +%s) - START ))s, left $(left)s]"; } >> $F; ts "$*"; }
rs() {  # rs NAME SGC-ARGS... : sglconsole ARGS recorded (out, err, rc, seconds) into $A and appended to facts
  local name=$1; shift
  r $name SGC "$@"
  { echo "=== sglconsole $* | $(grep "^$name rc=" $A/rcs.txt | tail -1)"
    cat $A/$name.out; [ -s $A/$name.err ] && { echo "--- stderr (tail):"; tail -15 $A/$name.err; }; echo; } >> $F
}
enough() { [ $(left) -gt $1 ] || { echo "SKIPPED (budget: $(left)s left, needs $1)" >> $F; ts "skip: budget"; return 1; }; }
DONE=0
finish() {
  [ $DONE = 1 ] && return; DONE=1
  ts "finish (left $(left)s)"
  for p in $WJ $LP; do kill $p 2>/dev/null; done
  cp /root/logs/*.log /root/logs/*.out /root/hosts*.yaml /root/x.yaml $A/ 2>/dev/null
  ps -eo pid,ppid,pgid,sid,stat,lstart,args > $A/ps_end.txt; nvidia-smi > $A/nvidia-smi_end.txt 2>&1
  tar -czf $OUT/verify24.tgz -C $A . 2>/dev/null
  cp $F $OUT/facts24.txt; cp $A/steps.txt $OUT/steps.txt; cp $A/watch_json.txt $OUT/ 2>/dev/null
  cp $LOG $OUT/sglang-30000.log 2>/dev/null; cp $LOGB $OUT/sglang-30001.log 2>/dev/null
}
trap finish EXIT TERM INT

sec "versions"
{ echo "repo HEAD: $(git -C $R rev-parse HEAD 2>&1 | head -1)"
  echo "sglconsole/*.py tree sha256: $(cd $R && find sglconsole -name '*.py' -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
  (cd $R && find sglconsole -name '*.py' -type f | LC_ALL=C sort | xargs sha256sum) > $A/tree_sha.txt
  echo "  (the sent tree may be newer than the HEAD above; compare the hash, per file: tree_sha.txt in the tgz)"
  echo "  (here: cd REPO && find sglconsole -name '*.py' -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
  echo "kit: $(ls -la $K/*.tar.xz | awk '{print $5, $9}' | tr '\n' ' ')"; } >> $F
install_all || { echo "install FAILED" >> $F; exit 1; }
start_sshd
r version SGC --version; echo "console: $(cat $A/version.out $A/version.err | head -2 | tr '\n' ' ')" >> $F
$PY -c "import importlib.metadata as m; print('sglang', m.version('sglang'), 'transformers', m.version('transformers'), 'flashinfer', m.version('flashinfer-python'))" >> $F 2>&1
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))" >> $F 2>&1

# a server left by an earlier call on a warm machine: stop its session
for OLD in $(ps -eo pid=,args= | grep "sglang.launch_server" | grep -v grep | awk '{print $1}'); do
  OPG=$(ps -o pgid= -p $OLD | tr -d ' '); [ -n "$OPG" ] && [ "$OPG" != "$MYPG" ] && kill -TERM -- -$OPG 2>/dev/null
done; sleep 1
mkdir -p /root/logs; mv $LOG $LOG.old 2>/dev/null; mv $LOGB $LOGB.old 2>/dev/null

# hosts files: the profile (mkhosts.py) and its variants
mkhosts "$COMMON $NGRAM" /root/hosts.yaml
cat > /root/x.yaml <<'YX'
load-format: dummy
attention-backend: triton
grammar-backend: none
enable-metrics: true
mem-fraction-static: 0.2
max-running-requests: 8
disable-prefill-cuda-graph: true
disable-decode-cuda-graph: true
YX
# disable-cuda-graph is a DeprecatedStoreTrueAction in 0.5.17: ConfigArgumentMerger refuses it (seen 2026-12-05)
sed 's/^disable-prefill-cuda-graph: true/disable-cuda-graph: true/' /root/x.yaml > /root/x_deprecated.yaml
PYTHONPATH=/opt/sgc python3 - <<'PYV' >> $F 2>&1
import copy, yaml
base = yaml.safe_load(open("/root/hosts.yaml"))
def write(path, mutate):
    c = copy.deepcopy(base); mutate(c); open(path, "w").write(yaml.safe_dump(c, sort_keys=False)); print("wrote", path)
prof = lambda c: c["profiles"]["tiny-ngram"]
write("/root/hosts-specv2.yaml", lambda c: prof(c).update(env={"SGLANG_ENABLE_SPEC_V2": "1"}))
write("/root/hosts-refused.yaml", lambda c: prof(c).update(args=prof(c)["args"] + ["--enable-double-sparsity"]))
write("/root/hosts-refused517.yaml", lambda c: prof(c).update(args=prof(c)["args"] + ["--enable-double-sparsity"],
                                                               requires_sglang="==0.5.17"))
def cfg(c):
    c["profiles"] = {"tiny-config": {"description": "flags in --config /root/x.yaml", "python": "/opt/sglvenv/bin/python",
        "workdir": "/root", "args": ["--config", "/root/x.yaml", "--model-path", "/opt/tiny", "--host", "127.0.0.1"],
        "startup_timeout": 300}}
    c["hosts"]["h200"]["servers"] = [{"port": 30001, "profile": "tiny-config", "gpus": [0], "log": "/root/logs/sglang-30001.log"}]
write("/root/hosts-config.yaml", cfg)
PYV

sec "a. server A starts: $COMMON $NGRAM --port $PORT"
PA=$(python3 $K/spawn.py $LOG CUDA_VISIBLE_DEVICES=0 -- $PY -m sglang.launch_server $COMMON $NGRAM --port $PORT)
T_A=$(date +%s); echo "pid $PA at $(date +%T)" >> $F

sec "e. host-side registry read: sglang/srt/environ.py of the installed SGLang"
r environ python3 - $SP <<'PYE'
import ast, os, sys, time
t = time.time()
path = os.path.join(sys.argv[1], "sglang", "srt", "environ.py")
src = open(path).read()
tree = ast.parse(src)
names = [n.targets[0].id for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Envs"
         for n in c.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]
print("path", path, "bytes", len(src), "parse %.3fs" % (time.time() - t))
print("Envs names:", len(names), "| SGLANG_ENABLE_SPEC_V2 in Envs:", "SGLANG_ENABLE_SPEC_V2" in names)
print(" ".join(names))
hits = []
for d, _, fs in os.walk(os.path.join(sys.argv[1], "sglang")):
    for f in fs:
        if f.endswith(".py"):
            p = os.path.join(d, f)
            for i, l in enumerate(open(p, errors="replace"), 1):
                if "SGLANG_ENABLE_SPEC_V2" in l:
                    hits.append("%s:%d: %s" % (os.path.relpath(p, sys.argv[1]), i, l.strip()))
print("SGLANG_ENABLE_SPEC_V2 anywhere in sglang/ (%d):" % len(hits)); print("\n".join(hits))
PYE
cat $A/environ.out $A/environ.err >> $F

sec "c. preflight of a profile with --enable-double-sparsity (in 0.5.9's flag table, not 0.5.17's)"
HOSTS=/root/hosts-refused.yaml rs check_refused check
HOSTS=/root/hosts-refused517.yaml rs check_refused517 check
HOSTS=/root/hosts-refused.yaml SGC_TIMEOUT=90 rs check_refused_against check --against h200
HOSTS=/root/hosts-refused.yaml SGC_TIMEOUT=60 rs relaunch_refused_dry relaunch h200:30000 --dry-run --yes

sec "d. SGLang's own merge of --config YAMLs (no server): x.yaml, and x_deprecated.yaml (disable-cuda-graph)"
for Y in x x_deprecated; do
  r merge_$Y $PY -c "import sys; from sglang.srt.server_args import prepare_server_args as p
a = p(['--config', '/root/$Y.yaml', '--model-path', '/opt/tiny']); print({k: getattr(a, k, None) for k in
  ['load_format', 'attention_backend', 'grammar_backend', 'enable_metrics', 'mem_fraction_static', 'max_running_requests',
   'disable_prefill_cuda_graph', 'disable_decode_cuda_graph', 'disable_cuda_graph', 'cuda_graph_config']})"
  { echo "--- $Y.yaml: $(grep "^merge_$Y rc=" $A/rcs.txt)"; tail -2 $A/merge_$Y.out; grep -v -i warn $A/merge_$Y.err | tail -2; } | cut -c1-400 >> $F
done

sec "a. waiting for A"
wait_ready $PA $(( $(left) - 200 )) 1; RA=$?; echo "A ready rc=$RA after $(( $(date +%s) - T_A ))s" >> $F
grep -m5 -E "Error|Traceback" $LOG >> $F 2>/dev/null

if [ $RA = 0 ]; then
  # B starts now (flashinfer's JIT cache is warm), while the console watches A
  sec "d. server B starts: --config /root/x.yaml --model-path /opt/tiny --host 127.0.0.1 --port 30001"
  PB=$(python3 $K/spawn.py $LOGB CUDA_VISIBLE_DEVICES=0 -- $PY -m sglang.launch_server --config /root/x.yaml --model-path /opt/tiny --host 127.0.0.1 --port 30001)
  T_B=$(date +%s); echo "pid $PB" >> $F

  sec "a. light greedy load (2-way) + status --watch --json for ${WATCH_S:-62} s"
  OFF=$(wc -c < $LOG); DEP0=$(grep -c -i deprecated $LOG)
  python3 $K/load.py --url $URL --seconds $(( ${WATCH_S:-62} + 8 )) --concurrency 2 --greedy-only --out $A/load.json > $A/load.txt 2>&1 & LP=$!
  W0=$(date +%s)
  timeout -s INT ${WATCH_S:-62} env PYTHONPATH=/opt/sgc:$R XDG_STATE_HOME=/root/state COLUMNS=200 python3 -m sglconsole -c /root/hosts.yaml \
    status --watch --json 2> $A/watch_json.err > >(python3 $K/tsline.py $W0 > $A/watch_json.txt) & WJ=$!
  wait $WJ; echo "watch rc=$? lines=$(wc -l < $A/watch_json.txt)" >> $F; WJ=""
  r status_after SGC status --json; echo "status --json after: $(brief $A/status_after.out)" >> $F
  wait $LP; LP=""; tail -3 $A/load.txt >> $F
  python3 - $A/watch_json.txt <<'PYW' >> $F 2>&1
import collections, json, sys
seen = collections.Counter(); n = bad = 0
for line in open(sys.argv[1]):
    n += 1
    try:
        d = json.loads(line.split(" ", 2)[2])
    except Exception:
        bad += 1; continue
    for h, hv in d.get("hosts", {}).items():
        for s in hv.get("servers", []):
            seen[(s.get("port"), s.get("status"), s.get("load_source"), s.get("drift"))] += 1
print("watch lines", n, "unparsable", bad, "| (port, status, load_source, drift): count", dict(seen))
PYW
  tail -c +$((OFF + 1)) $LOG > $A/log_during_watch.txt
  { echo "log A: $(wc -l < $LOG) lines; 'deprecated' (any case): $(grep -c -i deprecated $LOG) in all, $DEP0 before the watch,"
    echo "  $(grep -c -i deprecated $A/log_during_watch.txt) in the $(wc -l < $A/log_during_watch.txt) lines written while the console watched"
    echo "deprecated lines (first 10, unique):"; grep -i deprecated $LOG | sed 's/^\[[^]]*\] //' | sort | uniq -c | sort -rn | head -10
    echo "endpoint lines in the log during the watch:"; grep -o -E '"(GET|POST) /[a-z_/]*' $A/log_during_watch.txt | sort | uniq -c | head; } >> $F

  sec "b. diff of A against its profile, and against the profile + env SGLANG_ENABLE_SPEC_V2=1"
  enough 100 && { OFF2=$(wc -c < $LOG)
  SGC_TIMEOUT=60 rs diff_same diff h200:30000
  SGC_TIMEOUT=60 rs diff_same_json diff h200:30000 --json
  HOSTS=/root/hosts-specv2.yaml SGC_TIMEOUT=60 rs diff_specv2 diff h200:30000
  HOSTS=/root/hosts-specv2.yaml SGC_TIMEOUT=60 rs diff_specv2_json diff h200:30000 --json
  HOSTS=/root/hosts-specv2.yaml r status_specv2 SGC status --json; echo "status --json (specv2 profile): $(brief $A/status_specv2.out)" >> $F
  echo "'deprecated' lines A's log gained during these diffs/status: $(tail -c +$((OFF2 + 1)) $LOG | grep -c -i deprecated)" >> $F
  snap A_end $PA 10  # asks every endpoint, the deprecated ones too: its lines come after the counts above
  }

  sec "d. server B (--config) ready?"
  RB=1
  while [ $(left) -gt 60 ]; do
    kill -0 $PB 2>/dev/null || { echo "B died" >> $F; break; }
    [ "$(python3 $K/httpget.py $URLB/health - 3 | cut -d' ' -f1)" = 200 ] && grep -q "The server is fired up" $LOGB && { RB=0; break; }
    sleep 1
  done
  echo "B ready rc=$RB after $(( $(date +%s) - T_B ))s" >> $F; grep -m5 -E "Error|Traceback" $LOGB >> $F 2>/dev/null
  if [ $RB = 0 ] && enough 45; then
    python3 $K/httpget.py $URLB/server_info $A/B_server_info.json 10 >> $F
    python3 - $A/B_server_info.json <<'PYB' >> $F 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["config", "model_path", "load_format", "attention_backend", "grammar_backend", "enable_metrics",
        "mem_fraction_static", "max_running_requests", "disable_cuda_graph", "port", "host", "version"]
print("B /server_info:", {k: d.get(k, "<absent>") for k in keys})
PYB
    HOSTS=/root/hosts-config.yaml SGC_TIMEOUT=60 rs diff_config diff h200:30001
    HOSTS=/root/hosts-config.yaml SGC_TIMEOUT=60 rs diff_config_json diff h200:30001 --json
    HOSTS=/root/hosts-config.yaml r status_config SGC status --json; echo "status --json (B): $(brief $A/status_config.out)" >> $F
    python3 $K/httpget.py $URLB/metrics $A/B_metrics.txt 10 >> $F
  fi
fi

sec "d. startup milestones and /metrics startup-time families"
for L in $LOG $LOGB; do
  echo "--- $L" >> $F
  grep -n -E "Init torch distributed|Init parallel|Load weight|Memory pool|KV Cache|Capture cuda graph|Capture .*graph end|max_total_num_tokens|Uvicorn running|Application startup|fired up|server_args=|ServerArgs\(" $L 2>/dev/null | cut -c1-260 | head -25 >> $F
done
python3 $K/httpget.py $URL/metrics $A/A_metrics.txt 10 >> $F
for M in $A/A_metrics.txt $A/B_metrics.txt; do
  [ -f $M ] || continue
  echo "--- $M: $(grep -c '^# TYPE' $M) families; startup/time-ish:" >> $F
  grep '^# TYPE' $M | grep -i -E "start|init|launch|load|ready|uptime|time_seconds" | head -20 >> $F
done
sec "done"

#!/bin/bash
# verify.sh: ONE device call (fresh nvidia-h200): real SGLang 0.5.17 + the console from this working tree.
#   install -> sshd -> hosts.yaml -> profile server B (cold start ~125 s) -> status at ready (text, --json)
#   -> 15 s greedy 16-way load with status during it -> the JIT stall (first top_p requests, 16-way; ~85 s)
#   with `status` and `status --json` every ~15 s, `status --watch` (pty, text) and `status --watch --json`
#   logged with timestamps, one endpoint snapshot mid-stall -> idle: status/status --json at +5/+30/+65 s after
#   the last request (with /get_load beside each) -> bench --engine console (tiny), /health after it.
# Run from the repo root: bash .h200/verify.sh   (the `run` tool: carry [".h200"], timeout_s 600)
# Everything lands in $OUT (8 files at most come back): see finish() below.
set -u
R=$(pwd); K=$R/.h200; A=/root/vout; rm -rf $A; mkdir -p $A
OUT=${OUT:-/tmp/verify-out}; mkdir -p $OUT
BUDGET_S=${BUDGET_S:-555}
source $K/lib.sh
PHASE=setup; PH0=$START; JW=""; WT=""; WJ=""; SNP=""; PB=""
rs() {  # rs GROUP NAME SGC-ARGS... : `sglconsole ARGS` recorded (out, err, rc, seconds) and appended to $A/GROUP.txt
  local g=$1 name=$2; shift 2; local at=$(date +%T.%3N) rel=$(( $(date +%s) - PH0 ))
  r $name SGC "$@"
  { echo "=== $name: sglconsole $* | started $at (+${rel}s into phase $PHASE) | $(grep "^$name rc=" $A/rcs.txt | tail -1)"
    case " $* " in *" --json "*) echo "brief: $(brief $A/$name.out)";; esac
    cat $A/$name.out; [ -s $A/$name.err ] && { echo "--- stderr (tail):"; tail -20 $A/$name.err; }; echo; } >> $A/$g.txt
}
DONE=0
finish() {
  [ $DONE = 1 ] && return; DONE=1
  ts "finish (left $(left)s)"
  for p in $WT $WJ; do kill -INT $p 2>/dev/null; done; sleep 2
  for p in $JW $WT $WJ; do kill $p 2>/dev/null; done
  [ -n "$SNP" ] && wait $SNP 2>/dev/null
  cp /root/logs/*.log /root/logs/*.out $A/ 2>/dev/null; cp /root/hosts*.yaml $A/ 2>/dev/null
  cp -r /root/state/sglconsole $A/state 2>/dev/null
  ps -eo pid,ppid,pgid,sid,stat,lstart,args > $A/ps_end.txt
  nvidia-smi > $A/nvidia-smi_end.txt 2>&1
  tar -czf $OUT/verify.tgz -C $A . 2>/dev/null
  cp $A/steps.txt $OUT/steps.txt
  cp $A/stall.txt $OUT/stall_status.txt 2>/dev/null
  cp $A/idle.txt $OUT/idle_status.txt 2>/dev/null
  cat $A/start.txt $A/ready.txt $A/greedy.txt $A/bench.txt > $OUT/other_status.txt 2>/dev/null
  cp $A/watch_text.txt $OUT/watch_text.txt 2>/dev/null
  cp $A/watch_json.txt $OUT/watch_json.txt 2>/dev/null
  cp $LOG $OUT/sglang-30000.log 2>/dev/null
}
trap finish EXIT TERM INT

install_all || exit 1
start_sshd
jitwatch $A/jit_ps.txt & JW=$!
PROFILE_ARGS="$COMMON $NGRAM"
mkhosts "$PROFILE_ARGS" /root/hosts.yaml
cp /root/hosts.yaml $A/hosts.yaml
{ echo "kit: $(ls -la $K/*.tar.xz | awk '{print $5, $9}' | tr '\n' ' ')"; echo "repo HEAD: $(git -C $R rev-parse HEAD 2>/dev/null)";
  git -C $R status --short 2>/dev/null | head -30; } > $A/kit.txt

# a server left by an earlier call on a warm machine: stop its session, drop flashinfer's sampling JIT cache
# (so that the first top_p request compiles it again and the stall happens)
OLD=$(ps -eo pid=,args= | grep "sglang.launch_server" | grep -v grep | awk '{print $1}' | head -1)
if [ -n "$OLD" ]; then
  OPG=$(ps -o pgid= -p $OLD | tr -d ' '); ts "warm machine: stopping old server pid $OLD pgid $OPG"
  [ -n "$OPG" ] && [ "$OPG" != "$MYPG" ] && kill -TERM -- -$OPG
  for i in $(seq 1 40); do kill -0 $OLD 2>/dev/null || break; sleep 0.5; done
  kill -0 $OLD 2>/dev/null && [ -n "$OPG" ] && [ "$OPG" != "$MYPG" ] && kill -KILL -- -$OPG; sleep 2
fi
find /root/.cache/flashinfer -iname '*sampling*' -prune -exec rm -rf {} + 2>/dev/null
[ -f $LOG ] && mv $LOG /root/logs/sglang-30000-earlier-$(date +%s).log

# --- start the profile server B
PHASE=start; PH0=$(date +%s)
PB=$(python3 $K/spawn.py $LOG CUDA_VISIBLE_DEVICES=0 -- $PY -m sglang.launch_server $PROFILE_ARGS --port $PORT)
echo "$(date +%s.%N) B pid $PB: $PROFILE_ARGS --port $PORT (CUDA_VISIBLE_DEVICES=0)" >> $A/launches.txt
ts "B launched pid $PB"
sleep 30
kill -0 $PB 2>/dev/null && SGC_TIMEOUT=60 rs start status_starting status --json
MAXW=$(( $(left) - 300 )); [ $MAXW -lt 150 ] && MAXW=150
wait_ready $PB $MAXW 1 || { tail -30 $LOG >> $A/steps.txt; exit 1; }

# --- at ready
PHASE=ready; PH0=$(date +%s)
snap B_ready $PB
rs ready status_ready_text status
rs ready status_ready_json status --json

# --- greedy load, 15 s, 16-way, status during it
PHASE=greedy; PH0=$(date +%s)
python3 $K/load.py --url $URL --seconds 15 --concurrency 16 --greedy-only --out $A/load_greedy.json > $A/load_greedy.txt 2>&1 &
LG=$!
sleep 6
SGC_TIMEOUT=40 rs greedy status_greedy_text status
SGC_TIMEOUT=40 rs greedy status_greedy_json status --json
wait $LG; ts "greedy: $(cat $A/load_greedy.txt)"

# --- the JIT stall: 16 sampled (top_p 0.9) requests; flashinfer compiles its sampling module meanwhile
[ $(left) -gt 200 ] || { ts "too little time left for the stall ($(left)s)"; exit 1; }
PHASE=stall; PH0=$(date +%s); STALL0=$PH0
python3 $K/load.py --url $URL --seconds 20 --concurrency 16 --sampled-only --out $A/load_stall.json > $A/load_stall.txt 2>&1 &
LP=$!
ts "stall phase: sampled load pid $LP"
WDUR=$(( $(left) - 40 )); [ $WDUR -gt 330 ] && WDUR=330
timeout -s INT $WDUR python3 $K/ptylog.py 200 60 $A/watch_text.txt $STALL0 -- env PYTHONPATH=/opt/sgc:$R XDG_STATE_HOME=/root/state \
  python3 -m sglconsole -c /root/hosts.yaml status --watch > $A/watch_text.err 2>&1 &
WT=$!
timeout -s INT $WDUR env PYTHONPATH=/opt/sgc:$R XDG_STATE_HOME=/root/state python3 -m sglconsole -c /root/hosts.yaml status --watch --json \
  2> $A/watch_json.err > >(python3 $K/tsline.py $STALL0 > $A/watch_json.txt) &
WJ=$!
i=0; SNAPPED=0
while kill -0 $LP 2>/dev/null && [ $(left) -gt 150 ]; do
  i=$((i + 1)); tick=$(date +%s)
  SGC_TIMEOUT=45 rs stall stall${i}_text status
  SGC_TIMEOUT=45 rs stall stall${i}_json status --json
  if [ $SNAPPED = 0 ] && [ $(( $(date +%s) - STALL0 )) -ge 30 ] && kill -0 $LP 2>/dev/null; then
    SNAPPED=1; ( snap B_stall $PB 5; ts "stall snapshot http codes: $(tr '\n' ';' < $A/snap_B_stall/http_codes.txt)" ) & SNP=$!
  fi
  while kill -0 $LP 2>/dev/null && [ $(( $(date +%s) - tick )) -lt 15 ]; do sleep 1; done
done
while kill -0 $LP 2>/dev/null && [ $(left) -gt 110 ]; do sleep 1; done
T_LAST=$(date +%s)
ts "stall load ended ($(( T_LAST - STALL0 ))s after it began): $(cat $A/load_stall.txt)"
[ -n "$SNP" ] && wait $SNP

# --- idle: +5, +30, +65 s after the last request
PHASE=idle; PH0=$T_LAST
for w in 5 30 65; do
  while [ $(date +%s) -lt $(( T_LAST + w )) ]; do sleep 0.5; done
  [ $(left) -lt 30 ] && { ts "idle +${w}s skipped: $(left)s left"; break; }
  { echo "=== /get_load and gen_throughput/num_running_reqs/num_queue_reqs at $(date +%T.%3N) (+$(( $(date +%s) - T_LAST ))s after the last request)"
    python3 $K/httpget.py $URL/get_load $A/idle${w}_get_load.json 5; cat $A/idle${w}_get_load.json; echo
    python3 $K/httpget.py $URL/metrics $A/idle${w}_metrics.txt 5; grep -E '^sglang:(gen_throughput|num_running_reqs|num_queue_reqs|spec_accept_length)' $A/idle${w}_metrics.txt
    echo; } >> $A/idle.txt
  rs idle idle${w}_text status
  rs idle idle${w}_json status --json
done
for p in $WT $WJ; do kill -INT $p 2>/dev/null; done
ts "watchers stopped"

# --- bench (console engine, tiny); the server must survive it
if [ $(left) -gt 75 ]; then
  PHASE=bench; PH0=$(date +%s)
  BT=$(( $(left) - 40 )); [ $BT -gt 120 ] && BT=120
  SGC_TIMEOUT=$BT rs bench bench bench h200:30000 --engine console --concurrency 1,4 --num-prompts 8 --input-len 128 --output-len 128 --json
  sleep 2
  H=$(python3 $K/httpget.py $URL/health - 10)
  ts "after bench: /health $H; server pid $PB $(kill -0 $PB 2>/dev/null && echo alive || echo GONE)"
  echo "after bench: /health $H; server pid $PB $(kill -0 $PB 2>/dev/null && echo alive || echo GONE)" >> $A/bench.txt
  [ $(left) -gt 20 ] && SGC_TIMEOUT=$(( $(left) - 10 )) rs bench status_after_bench status --json
else
  ts "bench skipped: $(left)s left"
fi
ts "log: $(grep -c 'Health check failed' $LOG) 'Health check failed' lines, $(grep -c 'The server is fired up' $LOG) 'fired up' lines"
ts "done; left $(left)s"

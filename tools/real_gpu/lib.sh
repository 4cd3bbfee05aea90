# Adapted from shared/tools/real-gpu/lib.sh for the kit in .h200/ (the console runs from the copied
# working tree, not a tarball). Sourced with R (repo root on the device), K ($R/.h200), A (work dir) set.
export PYTHONUNBUFFERED=1
START=${START:-$(date +%s)}; DEADLINE=$((START + ${BUDGET_S:-540}))
MYPG=$(ps -o pgid= -p $$ | tr -d ' ')
left() { echo $((DEADLINE - $(date +%s))); }
ts() { echo "[$(date +%T) +$(( $(date +%s) - START ))s] $*" | tee -a $A/steps.txt; }
PORT=30000; URL=http://127.0.0.1:$PORT; PY=/opt/sglvenv/bin/python; LOG=/root/logs/sglang-30000.log
GPUQ=index,uuid,name,pci.bus_id,driver_version,utilization.gpu,utilization.memory,memory.used,memory.total,memory.free,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem,fan.speed,pstate,mig.mode.current,ecc.errors.uncorrected.volatile.total,clocks_throttle_reasons.active
command -v ninja >/dev/null || export PATH="$(python3 -c 'import ninja; print(ninja.BIN_DIR)' 2>/dev/null):$PATH"
command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"; }
SP=/opt/sglvenv/lib/python3.12/site-packages
install_all() {
  mkdir -p /root/logs /root/state
  if [ -f /opt/sglvenv/.done ]; then ts "install: already there (warm machine)"; return; fi
  ts "install"
  nvidia-smi --query-gpu=$GPUQ --format=csv,noheader,nounits > $A/gpu_query.txt 2>&1
  python3 -m venv --without-pip /opt/sglvenv > $A/venv.txt 2>&1
  mkdir -p $SP /opt/sgc
  tar -xJf $K/sgc.tar.xz -C /opt/sgc & local sgcp=$!
  tar -xJf $K/site.tar.xz -C $SP && mkdir -p $SP/flashinfer && tar -xJf $K/fi_data.tar.xz -C $SP/flashinfer/ || { ts "site unpack FAILED"; return 1; }
  wait $sgcp || { ts "sgc unpack FAILED"; return 1; }
  TSP=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
  echo "import site; site.addsitedir('$TSP')" > $SP/zz_device_torch.pth
  for b in ninja; do [ -e /opt/sglvenv/bin/$b ] || ln -s "$(command -v $b)" /opt/sglvenv/bin/$b; done
  rm -rf /opt/tiny && cp -r $K/tiny /opt/tiny
  ldconfig -p | grep -q 'libnuma.so.1 ' && echo "libnuma present" >> $A/venv.txt || echo "libnuma MISSING" >> $A/venv.txt
  { echo "PATH=$PATH"; command -v nvcc ninja python3 gcc g++; nvcc --version | tail -2; python3 -V; uname -a; head -2 /etc/os-release;
    env | grep -E '^(NCCL|CUDA|NV_|NVIDIA|LD_LIBRARY)' | sort; } >> $A/venv.txt 2>&1
  touch /opt/sglvenv/.done; ts "installed"
}
start_sshd() {
  if [ -f /root/sshkeys/id_ed25519 ] && python3 -c "import socket; socket.create_connection(('127.0.0.1', 2222), 1)" 2>/dev/null; then ts "sshd already up"; return; fi
  PYTHONPATH=/opt/sgc python3 $K/mkkeys.py /root/sshkeys 2222 > $A/keys.txt 2>&1
  PYTHONPATH=/opt/sgc python3 $K/spawn.py /root/logs/sshd.out -- python3 $K/sshd_asyncssh.py /root/sshkeys/host_ed25519 /root/sshkeys/authorized_keys 2222 /root/logs/sshd.log > /dev/null
  for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.5; python3 -c "import socket; socket.create_connection(('127.0.0.1', 2222), 1)" 2>/dev/null && break; done
  ts "sshd started (port 2222 $(python3 -c "import socket; socket.create_connection(('127.0.0.1', 2222), 1); print('open')" 2>/dev/null || echo CLOSED))"
}
mkhosts() { PYTHONPATH=/opt/sgc python3 $K/mkhosts.py "$@"; }
snap() {  # snap TAG PID [TIMEOUT]: endpoints in parallel, procs, nvidia-smi
  local d=$A/snap_$1 p=$2 tmo=${3:-15}; mkdir -p $d
  local hp=""
  for ep in server_info get_server_info model_info get_model_info metrics get_load health health_generate v1/models version ready; do
    python3 $K/httpget.py $URL/$ep $d/$(echo $ep | tr / _).txt $tmo >> $d/http_codes.txt & hp="$hp $!"; done
  ps -eo pid,ppid,pgid,sid,stat,lstart,args > $d/ps.txt
  local sid=$(ps -o sid= -p $p | tr -d ' ')
  for q in $(ps -eo pid=,sid= | awk -v s="$sid" '$2==s {print $1}'); do
    echo "== pid $q comm=[$(cat /proc/$q/comm 2>/dev/null)] ppid=$(ps -o ppid= -p $q) pgid=$(ps -o pgid= -p $q)"
    echo "cmdline: $(tr '\0' '|' < /proc/$q/cmdline 2>/dev/null)"
    echo "stat: $(cut -c1-200 /proc/$q/stat 2>/dev/null)"
  done > $d/procs.txt 2>&1
  nvidia-smi --query-gpu=$GPUQ --format=csv,noheader,nounits > $d/gpu.csv 2>&1
  nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_uuid --format=csv > $d/apps.csv 2>&1
  wait $hp
}
wait_ready() {  # wait_ready PID MAXS NTH-fired-up-line
  local p=$1 max=$2 t0=$(date +%s) h=""
  while [ $(( $(date +%s) - t0 )) -lt $max ]; do
    kill -0 $p 2>/dev/null || { ts "pid $p died"; return 2; }
    h=$(python3 $K/httpget.py $URL/health - 3 | cut -d' ' -f1)
    [ "$h" = 200 ] && [ $(grep -c "The server is fired up" $LOG) -ge $3 ] && { ts "ready after $(( $(date +%s) - t0 ))s"; return 0; }
    sleep 1
  done; ts "not ready after ${max}s"; return 1
}
jitwatch() {  # jitwatch FILE: every 2 s, build tools and their groups/sessions (background)
  while true; do
    local x=$(ps -eo pid,ppid,pgid,sid,etimes,args | grep -E '[ /](ninja|nvcc|cicc|ptxas|cudafe\+\+|fatbinary|nvlink|c\+\+|g\+\+|cc1plus|gcc)( |$)|sh -c .*nvcc' | grep -v grep)
    [ -n "$x" ] && { echo "@$(date +%s) $(date +%T)"; echo "$x"; } >> $1
    sleep 2
  done
}
r() {  # r NAME CMD... : stdout/stderr/rc/seconds into $A
  local name=$1; shift; local t0=$(date +%s.%N)
  "$@" > $A/$name.out 2> $A/$name.err; local rc=$?
  local el=$(awk -v a=$(date +%s.%N) -v b=$t0 'BEGIN{printf "%.1f", a-b}')
  echo "$name rc=$rc ${el}s" >> $A/rcs.txt; ts "$name rc=$rc ${el}s"
}
SGC() { PYTHONPATH=/opt/sgc:$R XDG_STATE_HOME=/root/state COLUMNS=200 timeout ${SGC_TIMEOUT:-120} python3 -m sglconsole -c ${HOSTS:-/root/hosts.yaml} "$@"; }
brief() {  # brief FILE: one line per server from status --json (tolerant of schema changes)
  python3 - "$1" <<'PYX' 2>&1
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("unparsable:", e); sys.exit()
for h, hv in d.get("hosts", {}).items():
    if not hv.get("servers"):
        print(h, "no servers; reachable", hv.get("reachable"), "error", hv.get("error"))
    for s in hv.get("servers", []):
        g = s.get
        print(h, g("port"), g("status"), "|", g("reason"), "| pid", g("pid"), "tok_s", g("tok_s"), "acc", g("accept_len"),
              "run", g("running_req"), "q", g("queue_req"), "src", g("load_source"), "health", g("health"), "stale_s", g("stale_s"),
              "drift", g("drift"), g("drift_count"), "| not_known", d.get("drift_not_known"))
PYX
}
COMMON="--model-path /opt/tiny --load-format dummy --host 127.0.0.1 --attention-backend triton --grammar-backend none --enable-metrics"
NGRAM="--speculative-algorithm NGRAM --speculative-num-draft-tokens 8 --max-running-requests 32 --cuda-graph-max-bs 32 --mem-fraction-static 0.5"

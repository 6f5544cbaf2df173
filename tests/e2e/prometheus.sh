#!/usr/bin/env bash
# End-to-end: a real Prometheus scrapes kube-batchd's /metrics.
#
#   tests/e2e/prometheus.sh [--build BUILDDIR] [--keep]
#
# Prometheus is built from its Go module at the release tests/tools/prometheus
# pins (tests/tools/prometheus/build: about ten minutes the first time, so
# this test is left out of CI; scripts/test runs every suite but
# "prometheus"). On the local control plane with kwok, the daemon schedules
# a gang that fits and one that never does, while Prometheus scrapes it
# every second. Then, through Prometheus's HTTP API:
#   - the target is up and its last scrape had no error (the exposition
#     format as Prometheus's own parser reads it);
#   - PromQL gives the bindings /metrics gives, and the queue's allocated
#     cpu is the bound pods' requests;
#   - the e2e latency histogram yields a quantile (buckets Prometheus
#     accepts as a histogram);
#   - every query of the Grafana dashboard (deploy/grafana/kube-batchd.json)
#     evaluates without error, its variables replaced as Grafana would.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=prometheus e2e_help_end=20
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_args "$@"
e2e_need kubectl curl python3 openssl flock setsid go
[[ -x $root/tests/cluster/up ]] || { echo "prometheus: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-prometheus
sched_pid= prom_pid=
cleanup() {
	[[ -z $prom_pid ]] || { kill "$prom_pid" 2>/dev/null; wait "$prom_pid" 2>/dev/null; }
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

prometheus=$("$root/tests/tools/prometheus/build") ||
	{ fail "Prometheus builds from tests/tools/prometheus/go.mod"; exit 1; }
pass "Prometheus $("$prometheus" --version 2>/dev/null | awk 'NR == 1 {print $3}') built from its module"

"$root/tests/cluster/up" --kwok "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; fail "the control plane starts (tests/cluster/up --kwok)"; exit 1; }
rm -f "$dir.up.log"
e2e_watch_invariants
admin=$dir/admin.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
e2e_free_port || { fail "a free port for kube-batchd"; exit 1; }
e2e_free_port prom_port || { fail "a free port for Prometheus"; exit 1; }
ns=prom-$(printf '%04x' $((RANDOM % 65536)))
k create namespace "$ns" >/dev/null

for n in 1 2; do
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: prom-node-$n, labels: {kubernetes.io/hostname: prom-node-$n}}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
EOF
done

log=$dir/kube-batchd.log
"$bin" --kubeconfig "$dir/scheduler.kubeconfig" --listen-address "127.0.0.1:$port" -v 2 >"$log" 2>&1 &
sched_pid=$!
e2e_wait_healthy "$port" "$sched_pid" "$log" || { fail "kube-batchd starts (log $log)"; exit 1; }

cat >"$dir/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: kube-batchd
  static_configs: [{targets: ["127.0.0.1:$port"]}]
EOF
"$prometheus" --config.file "$dir/prometheus.yml" --storage.tsdb.path "$dir/tsdb" \
	--web.listen-address "127.0.0.1:$prom_port" >"$dir/prometheus.log" 2>&1 &
prom_pid=$!
api=http://127.0.0.1:$prom_port/api/v1

# promql QUERY: the first result's value, or "none"; "error: ..." when
# Prometheus refuses the query.
promql() {
	{ curl -s --data-urlencode "query=$1" "$api/query" || echo '{}'; } | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    d = {"error": "no JSON answer"}
if d.get("status") != "success":
    print("error:", d.get("error", "?"))
elif not d["data"]["result"]:
    print("none")
else:
    print(d["data"]["result"][0]["value"][1])'
}
# The scrape target's health and last error, as "health|error".
target() {
	{ curl -s "$api/targets" || echo '{}'; } | python3 -c '
import json, sys
try:
    t = [t for t in json.load(sys.stdin)["data"]["activeTargets"] if t["labels"].get("job") == "kube-batchd"]
except (ValueError, KeyError):
    t = []
print(t[0]["health"] + "|" + t[0]["lastError"] if t else "none|")'
}
target_up() { [[ $(target) == "up|" ]]; }
wait_for 30 target_up
st=$(target)
check "Prometheus scrapes kube-batchd: the target is up, its last scrape without error ($st)" \
	test "$st" = "up|"

# A gang that fits (3 pods of 1 cpu, minMember 3) and one that never does
# (2 pods of 8 cpu).
gang() { # NAME SIZE CPU
	printf -- '---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s, namespace: %s}\nspec: {minMember: %s}\n' "$1" "$ns" "$2"
	local i
	for ((i = 0; i < $2; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $1-$i, namespace: $ns, annotations: {scheduling.k8s.io/group-name: $1}}
spec:
  schedulerName: kube-batchd
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "$3"}}}]
EOF
	done
}
{ gang fits 3 1; gang never 2 8; } | k create -f - >/dev/null
bound() { [[ $(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .) == 3 ]]; }
check "the gang that fits is bound (3 pods)" wait_for 30 bound

# Settled: the counters stop moving once the bindings are done; two more
# scrapes, then /metrics and PromQL read the same.
sleep 3
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
binds=$(metric kube_batchd_binds_total)
seen() { [[ $(promql kube_batchd_binds_total) == "$binds" ]]; }
wait_for 10 seen
check "PromQL's kube_batchd_binds_total ($(promql kube_batchd_binds_total)) = /metrics' ($binds)" test "$binds" = 3 -a "$(promql kube_batchd_binds_total)" = 3
cpu=$(promql 'sum(kube_batchd_queue_allocated_milli_cpu)')
check "PromQL's allocated milli-cpu summed over queues ($cpu) = the bound pods' requests (3000)" test "$cpu" = 3000
pending=$(promql 'sum(kube_batchd_pending_pods)')
check "PromQL's pending pods ($pending) = the gang that never fits (2)" test "$pending" = 2
q=$(promql 'histogram_quantile(0.99, sum by (le) (rate(kube_batchd_e2e_scheduling_latency_milliseconds_bucket[1m])))')
check "histogram_quantile over the e2e latency buckets gives a number ($q)" \
	python3 -c 'import math, sys; v = float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and v >= 0 else 1)' "$q"

# The dashboard's queries, as Grafana sends them: $__rate_interval and the
# other built-ins given values, the template variables matching anything.
dash=$root/deploy/grafana/kube-batchd.json
out=$(python3 - "$dash" "$api" <<'EOF'
import json, re, sys, urllib.error, urllib.parse, urllib.request
exprs = []
def walk(x):
    if isinstance(x, dict):
        if isinstance(x.get("expr"), str):
            exprs.append(x["expr"])
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(json.load(open(sys.argv[1])))
bad = []
for e in exprs:
    q = e.replace("$__rate_interval", "1m").replace("$__interval", "15s").replace("$__range", "5m")
    q = re.sub(r"\$\{?\w+\}?", ".*", q)
    try:
        r = json.load(urllib.request.urlopen(sys.argv[2] + "/query?" + urllib.parse.urlencode({"query": q})))
        if r.get("status") != "success":
            bad.append(q)
    except urllib.error.HTTPError as ex:
        bad.append(q + ": " + ex.read().decode(errors="replace")[:200])
print(len(exprs))
for b in bad:
    print(b)
EOF
)
n=$(head -1 <<<"$out")
check "all ${n:-0} queries of the Grafana dashboard evaluate on Prometheus without error$(tail -n +2 <<<"$out" | sed 's/^/; /' | tr -d '\n')" \
	test "${n:-0}" -gt 0 -a "$(wc -l <<<"$out")" = 1
check "the target is still up, its last scrape without error ($(target))" target_up

e2e_summary
((fails == 0))

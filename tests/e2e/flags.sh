#!/usr/bin/env bash
# End-to-end: the Deployment args of volcano, kube-batch and kube-scheduler
# start the daemon unchanged against the local control plane
# (tests/cluster/up), with the scheduler's restricted credentials.
#
#   tests/e2e/flags.sh [--build BUILDDIR] [--keep] [CASE...]
#
# Cases (default: all): volcano (the args of volcano's Helm chart,
# installer/helm/chart/volcano/templates/scheduler.yaml, "2>&1" included),
# kube-batch (its chart's "--logtostderr --v 3" plus its leader-election
# flags), kube-scheduler (component-base's leader-election durations and
# names, --logging-format=json, --log-file). Paths, ports and the kubeconfig
# are the only additions. Each case checks: the daemon becomes healthy; the
# Lease is where the flags say, with their duration; a pod naming the
# scheduler is bound; SIGTERM stops it with 0.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=flags e2e_help_end=16
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fixtures=$here/fixtures
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(volcano kube-batch kube-scheduler)
e2e_need kubectl curl openssl flock setsid python3
[[ -x $root/tests/cluster/up ]] || { echo "flags: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-flags
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

"$root/tests/cluster/up" "$dir" >"$dir.up.log" 2>&1 || { cat "$dir.up.log" >&2; echo "FAIL: control plane did not start"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
schedcfg=$dir/scheduler.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
e2e_free_port || { fail "a free port"; exit 1; }
e2e_free_port hport || { fail "a second free port"; exit 1; }
run=$(printf '%04x' $((RANDOM % 65536)))

k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: flags-node-1, labels: {kubernetes.io/hostname: flags-node-1}}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF

# start ARGS...: the daemon with ARGS (stdout and stderr to $log); waits
# for /healthz on --listen-address.
start() {
	log=$dir/$c.log
	"$bin" --kubeconfig "$schedcfg" --listen-address "127.0.0.1:$port" "$@" >"$log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$log"
}
# lease_field NS NAME JSONPATH
lease_field() { k get lease "$2" -n "$1" -o "jsonpath=$3" 2>/dev/null; }
lease_held() { [[ -n $(lease_field "$1" "$2" '{.spec.holderIdentity}') ]]; }
node_of() { k get pod "$2" -n "$1" -o 'jsonpath={.spec.nodeName}' 2>/dev/null; }
has_node() { [[ -n $(node_of "$1" "$2") ]]; }
# pod_bound NS NAME SCHEDULER: creates a pod naming SCHEDULER; true once it
# has a node (30 s at most).
pod_bound() {
	k create -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  schedulerName: $3
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]
EOF
	wait_for 30 has_node "$1" "$2"
}
stopped_cleanly() {
	kill -TERM "$sched_pid" 2>/dev/null
	wait "$sched_pid"
	local rc=$?
	sched_pid=
	((rc == 0))
}
mkns() { k create namespace "$1" >/dev/null 2>&1 || k get namespace "$1" >/dev/null; }
# lease_rbac NS NAME: deploy/rbac.yaml's lease Role for the Lease NS/NAME the
# flags put elsewhere, as an admin would apply it (deploy/README.md).
lease_rbac() { e2e_lease_rbac "$1" "$2" | k apply -f - >/dev/null; }

case_volcano() {
	local ns=vc-$run
	mkns volcano-system && mkns "$ns" && lease_rbac volcano-system volcano ||
		{ fail "volcano: namespaces and lease RBAC"; return; }
	# The chart's args, in its order, with what it sets by default; only the
	# configuration's path and the health port (volcano's :11251 on every
	# address) are ours.
	if ! start --logtostderr \
		--scheduler-conf="$fixtures/scheduler.conf" \
		--scheduler-name=volcano \
		--enable-healthz=true \
		--healthz-address="127.0.0.1:$hport" \
		--enable-metrics=true \
		--leader-elect=true \
		--leader-elect-resource-namespace=volcano-system \
		--kube-api-qps=2000 \
		--kube-api-burst=2000 \
		--schedule-period=1s \
		--node-worker-threads=20 \
		--percentage-nodes-to-find=0 \
		-v=3 \
		'2>&1'; then
		fail "volcano: the daemon starts with volcano's args"
		return
	fi
	pass "volcano: the daemon starts with volcano's args"
	check "volcano: /healthz ok on --healthz-address too" \
		test "$(curl -s "http://127.0.0.1:$hport/healthz")" = ok
	check "volcano: the Lease is volcano-system/volcano and held" wait_for 15 lease_held volcano-system volcano
	check "volcano: its leaseDurationSeconds is client-go's 15" \
		test "$(lease_field volcano-system volcano '{.spec.leaseDurationSeconds}')" = 15
	check "volcano: one warning for --node-worker-threads" \
		test "$(grep -c 'warning: --node-worker-threads is ignored' "$log")" = 1
	check "volcano: one warning for the \"2>&1\" argument" \
		test "$(grep -c 'warning: argument "2>&1" is ignored' "$log")" = 1
	check "volcano: a pod naming volcano is bound" pod_bound "$ns" p volcano
	check "volcano: SIGTERM stops it with 0" stopped_cleanly
	check "volcano: the stopped leader gave the Lease up" \
		test -z "$(lease_field volcano-system volcano '{.spec.holderIdentity}')"
	k delete namespace "$ns" --wait=false >/dev/null
}

case_kube-batch() {
	local ns=kb-$run
	mkns kb-system && mkns "$ns" && lease_rbac kb-system kube-batch ||
		{ fail "kube-batch: namespaces and lease RBAC"; return; }
	# kube-batch's chart: --logtostderr --v 3; its leader election needs
	# --lock-object-namespace.
	if ! start --logtostderr --v 3 --scheduler-name kube-batch --leader-elect \
		--lock-object-namespace kb-system \
		--scheduler-conf "$fixtures/scheduler.conf"; then
		fail "kube-batch: the daemon starts with kube-batch's args"
		return
	fi
	pass "kube-batch: the daemon starts with kube-batch's args"
	check "kube-batch: no warning" test -z "$(grep 'warning' "$log")"
	check "kube-batch: the Lease is kb-system/kube-batch and held" wait_for 15 lease_held kb-system kube-batch
	check "kube-batch: no Lease in kube-system" \
		test -z "$(lease_field kube-system kube-batch '{.metadata.name}')"
	check "kube-batch: a pod naming kube-batch is bound" pod_bound "$ns" p kube-batch
	check "kube-batch: SIGTERM stops it with 0" stopped_cleanly
	k delete namespace "$ns" --wait=false >/dev/null
}

case_kube-scheduler() {
	local ns=ks-$run jlog=$dir/kube-scheduler.json
	mkns sched-system && mkns "$ns" && lease_rbac sched-system batch-leader ||
		{ fail "kube-scheduler: namespaces and lease RBAC"; return; }
	if ! start --leader-elect=true \
		--leader-elect-lease-duration=20s \
		--leader-elect-renew-deadline=12s \
		--leader-elect-retry-period=1s \
		--leader-elect-resource-lock=leases \
		--leader-elect-resource-namespace=sched-system \
		--leader-elect-resource-name=batch-leader \
		--logging-format=json --log-file="$jlog" --v=2 \
		--scheduler-name=my-batch; then
		fail "kube-scheduler: the daemon starts with component-base's flags"
		return
	fi
	pass "kube-scheduler: the daemon starts with component-base's flags"
	check "kube-scheduler: the Lease is sched-system/batch-leader and held" \
		wait_for 15 lease_held sched-system batch-leader
	check "kube-scheduler: its leaseDurationSeconds is 20" \
		test "$(lease_field sched-system batch-leader '{.spec.leaseDurationSeconds}')" = 20
	check "kube-scheduler: a pod naming my-batch is bound" pod_bound "$ns" p my-batch
	check "kube-scheduler: SIGTERM stops it with 0" stopped_cleanly
	check "kube-scheduler: nothing logged to stderr with --log-file" test ! -s "$log"
	check "kube-scheduler: every --log-file line is a JSON object with ts, caller, msg, v" \
		python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 3, len(lines)
objs = [json.loads(l) for l in lines]
for o in objs:
    assert isinstance(o["ts"], float) and o["ts"] > 1.6e12, o
    assert isinstance(o["msg"], str) and ":" in o["caller"], o
    assert "v" not in o or isinstance(o["v"], int), o
assert any("sched-system/leases/batch-leader" in o["msg"] for o in objs), "no line names the lease"
' "$jlog"
	k delete namespace "$ns" --wait=false >/dev/null
}

for c in "${cases[@]}"; do
	if ! declare -F "case_$c" >/dev/null; then
		fail "no case \"$c\""
		continue
	fi
	"case_$c"
	stop_sched
done
e2e_summary
((fails == 0))

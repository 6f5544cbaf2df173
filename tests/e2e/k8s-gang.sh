#!/usr/bin/env bash
# End-to-end test of Kubernetes' own gang API (KEP-4671) with kube-batchd,
# against the newer local control plane (tests/cluster/up --next --kwok
# --controllers: kube-apiserver and kube-controller-manager v1.37 with the
# feature gates GenericWorkload and WorkloadWithJob, scheduling.k8s.io
# v1beta1 and v1alpha3 served; kwok makes bound pods run and finish).
#
#   tests/e2e/k8s-gang.sh [--build BUILDDIR] [--keep] [CASE...]
#
# Cases (default: all, in this order; log last):
#   gang     a scheduling.k8s.io/v1beta1 PodGroup (gang minCount 3) and its 3
#            pods (spec.schedulingGroup.podGroupName): bound whole, the
#            PodGroup's PodGroupInitiallyScheduled condition True, Events
#   too-big  a gang bigger than the cluster holds nothing, says why on the
#            PodGroup (condition False, reason Unschedulable) and its pods;
#            bad input: a pod naming a PodGroup that does not exist, a
#            minCount above the pods that exist: reasons, nothing bound
#   job      a batch/v1 Job with spec.scheduling gang: the Job controller
#            makes the Workload and PodGroup, kube-batchd binds the pods
#            whole, the Job completes
#   fair     two queues (weight 1 each; one named by the PodGroups'
#            annotation scheduling.volcano.sh/queue-name, one by the queue
#            file's namespace mapping), each asking the whole cluster in
#            gangs of 2: each gets half, no gang partly bound
#   log      kube-batchd's log has no error or warning line (but a 429 of
#            a watch cache still starting, retried) and says it
#            watches scheduling.k8s.io/v1beta1 PodGroups; every Event it
#            wrote has a known reason and a message
# Prints one PASS or FAIL line per check; exit 0 only if every check passed;
# 77 (skip) without Go, kubectl, curl, openssl, flock or setsid.
# Environment: KB_E2E_DIR (control-plane dir; default a fresh temp dir, shut
# down at the end unless --keep), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=k8s-gang e2e_help_end=32
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(gang too-big job fair log)
e2e_need go kubectl curl openssl flock setsid
[[ -x $root/tests/cluster/up ]] || { echo "k8s-gang: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-e2e-k8s
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

t0=$SECONDS
KB_CLUSTER_CONTROLLERS=job "$root/tests/cluster/up" --next --kwok --controllers "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; fail "the newer control plane starts (tests/cluster/up --next --kwok --controllers)"; exit 1; }
rm -f "$dir.up.log"
# shellcheck source=/dev/null
source "$dir/cluster.env"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
k() { kubectl --kubeconfig "$admin" "$@"; }
echo "  control plane $KB_K8S_VERSION up in $((SECONDS - t0)) s"
check "the apiserver serves scheduling.k8s.io/v1beta1 podgroups and workloads" \
	bash -c "kubectl --kubeconfig '$admin' api-resources --api-group=scheduling.k8s.io -o name | grep -qx podgroups.scheduling.k8s.io &&
		kubectl --kubeconfig '$admin' get --raw /apis/scheduling.k8s.io/v1beta1 | grep -q '\"name\":\"workloads\"'"
PG=podgroups.v1beta1.scheduling.k8s.io

run=$(printf '%04x' $((RANDOM % 65536)))
mkns() { k create namespace "$1-$run" >/dev/null && echo "$1-$run"; }
ns_fair_b=fair-b-$run

# ---- kube-batchd -----------------------------------------------------------
cat >"$dir/queues.yaml" <<EOF
queues:
- name: ml
  weight: 1
- name: research
  weight: 1
  namespaces: [$ns_fair_b]
EOF
e2e_free_port || { fail "a free port for kube-batchd"; exit 1; }
sched_log=$dir/kube-batchd.log
start_sched() {
	"$bin" --kubeconfig "$dir/scheduler.kubeconfig" --listen-address "127.0.0.1:$port" \
		--schedule-period 200ms -v 2 --scheduler-conf "$here/fixtures/scheduler.conf" \
		--queue-conf "$dir/queues.yaml" >>"$sched_log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$sched_log"
}

# ---- helpers ----------------------------------------------------------------
# Two nodes of 4 cpu that kwok keeps Ready.
for n in 1 2; do
	k create -f - >/dev/null <<EOF || { fail "node n$n is created"; exit 1; }
apiVersion: v1
kind: Node
metadata: {name: n$n-$run, labels: {kubernetes.io/hostname: n$n-$run}}
status:
  capacity: {cpu: "4", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 32Gi, pods: "110"}
EOF
done
# podgroup NS NAME MINCOUNT [QUEUE]: a scheduling.k8s.io/v1beta1 gang.
podgroup() {
	k create -f - >/dev/null <<EOF
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: $2
  namespace: $1
  annotations: {${4:+scheduling.volcano.sh/queue-name: $4}}
spec:
  schedulingPolicy: {gang: {minCount: $3}}
EOF
}
# pods NS GROUP N CPU: N pods of the group (label e2e-group=GROUP).
pods() {
	local i
	for ((i = 0; i < $3; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $1, labels: {e2e-group: $2}}
spec:
  schedulerName: kube-batchd
  schedulingGroup: {podGroupName: $2}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "$4"}}}]
EOF
	done | k create -f - >/dev/null
}
count_bound() { k get pods -n "$1" -l "$2" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }
# bound_whole NS SELECTOR N SECONDS: N bound in time, never seen 0 < bound < N
# for more than one second (bindings are separate API calls).
bound_whole() {
	local ns=$1 sel=$2 n=$3 secs=$4 b start=$SECONDS partial=0
	while ((SECONDS - start < secs)); do
		b=$(count_bound "$ns" "$sel")
		((b >= n)) && break
		((b > 0)) && partial=$((partial + 1))
		sleep 0.2
	done
	echo "  $ns/$sel: $b of $n bound after $((SECONDS - start)) s; $partial partial sample(s)"
	((b == n && partial <= 5))
}
holds_nothing() {
	local ns=$1 sel=$2 secs=$3 start=$SECONDS b max=0
	while ((SECONDS - start < secs)); do
		b=$(count_bound "$ns" "$sel")
		((b > max)) && max=$b
		sleep 0.2
	done
	echo "  $ns/$sel: at most $max bound over $secs s"
	((max == 0))
}
pg_cond() { k get "$PG" "$2" -n "$1" -o jsonpath="{.status.conditions[?(@.type==\"PodGroupInitiallyScheduled\")].$3}"; }
pod_reason() { k get pod "$2" -n "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
# free NS...: delete every pod of the namespaces and wait until they are
# gone; the pending ones first, so the room the bound ones leave is not
# given to a pod about to be deleted (its binding would fail, rightly
# logged as a warning).
free() {
	local ns
	for ns; do
		k delete pods -n "$ns" --field-selector spec.nodeName= --grace-period=0 --force >/dev/null 2>&1
	done
	for ns; do
		k delete pods --all -n "$ns" --grace-period=0 --force >/dev/null 2>&1
		wait_for 60 bash -c "[[ -z \$(kubectl --kubeconfig '$admin' get pods -n '$ns' -o name) ]]"
	done
}
events() { k get events -n "$1" --field-selector "$2" -o name | grep -c .; }
# involved NS SELECTOR: the sorted names of the objects those Events are about.
involved() { k get events -n "$1" --field-selector "$2" -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' | sort -u | tr '\n' ' '; }

start_sched || { fail "kube-batchd starts (log: $sched_log)"; exit 1; }

# ---- the cases ----------------------------------------------------------------
case_gang() {
	local ns
	ns=$(mkns gang) || { fail "gang: namespace"; return; }
	podgroup "$ns" train 3 ml && pods "$ns" train 3 1 || { fail "gang: PodGroup and pods created"; return; }
	check "gang: a v1beta1 PodGroup of minCount 3 is bound whole" bound_whole "$ns" e2e-group=train 3 30
	check "gang: its PodGroupInitiallyScheduled condition is True" \
		wait_for 20 bash -c "[[ \$(kubectl --kubeconfig '$admin' get $PG train -n '$ns' -o jsonpath='{.status.conditions[?(@.type==\"PodGroupInitiallyScheduled\")].status}') == True ]]"
	echo "  condition: $(pg_cond "$ns" train status) $(pg_cond "$ns" train reason): $(pg_cond "$ns" train message)"
	check "gang: nothing but that condition in its status (the API has no other field a scheduler owns)" \
		test "$(k get "$PG" train -n "$ns" -o jsonpath='{.status}' | tr -d ' ' | grep -o '"[a-zA-Z]*":' | sort -u | tr -d '\n')" = \
		'"conditions":"lastTransitionTime":"message":"reason":"status":"type":'
	check "gang: a Scheduled Event per pod and one on the PodGroup" \
		wait_for 20 bash -c "(( \$(kubectl --kubeconfig '$admin' get events -n '$ns' --field-selector involvedObject.kind=Pod,reason=Scheduled -o name | grep -c .) == 3 &&
			\$(kubectl --kubeconfig '$admin' get events -n '$ns' --field-selector involvedObject.kind=PodGroup,reason=Scheduled -o name | grep -c .) == 1 ))"
	free "$ns"
}

case_too_big() {
	local ns
	ns=$(mkns too-big) || { fail "too-big: namespace"; return; }
	podgroup "$ns" big 3 && pods "$ns" big 3 3 || { fail "too-big: PodGroup and pods created"; return; }
	podgroup "$ns" short 4 && pods "$ns" short 2 1 || { fail "too-big: PodGroup short created"; return; }
	k create -f - >/dev/null <<EOF || fail "too-big: the orphan pod is created"
apiVersion: v1
kind: Pod
metadata: {name: orphan, namespace: $ns, labels: {e2e-group: orphan}}
spec:
  schedulerName: kube-batchd
  schedulingGroup: {podGroupName: not-made}
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
EOF
	check "too-big: a gang of 3 x 3 cpu on 2 x 4 cpu holds nothing" holds_nothing "$ns" e2e-group=big 6
	check "too-big: minCount 4 with 2 pods holds nothing" holds_nothing "$ns" e2e-group=short 1
	check "too-big: the pod naming a missing PodGroup is not bound" holds_nothing "$ns" e2e-group=orphan 1
	check "too-big: its PodGroup says Unschedulable (condition False)" \
		test "$(pg_cond "$ns" big status)/$(pg_cond "$ns" big reason)" = False/Unschedulable
	echo "  big: $(pg_cond "$ns" big message)"
	check "too-big: the PodGroup's message names the gang and what is short" \
		bash -c "[[ '$(pg_cond "$ns" big message)' == *'gang \"$ns/big\"'*cpu* ]]"
	echo "  big-0: $(pod_reason "$ns" big-0)"
	check "too-big: its pods say why (PodScheduled False)" \
		bash -c "[[ '$(pod_reason "$ns" big-0)' == *'gang \"$ns/big\"'* ]]"
	echo "  short-0: $(pod_reason "$ns" short-0)"
	check "too-big: minCount above the pods: the pods say so" \
		bash -c "[[ '$(pod_reason "$ns" short-0)' == *'2 pods exist, fewer than minCount 4'* ]]"
	echo "  orphan: $(pod_reason "$ns" orphan)"
	check "too-big: a pod naming a missing PodGroup says so" \
		bash -c "[[ '$(pod_reason "$ns" orphan)' == *'PodGroup \"$ns/not-made\" not found'* ]]"
	# One Event per message: a reason that changes (the cluster's free cpu)
	# is a new Event, the same one again raises its count.
	echo "  FailedScheduling Events: $(events "$ns" involvedObject.kind=Pod,reason=FailedScheduling) on $(involved "$ns" involvedObject.kind=Pod,reason=FailedScheduling)"
	check "too-big: a FailedScheduling Event on every waiting pod, none on another" \
		test "$(involved "$ns" involvedObject.kind=Pod,reason=FailedScheduling)" = "big-0 big-1 big-2 orphan short-0 short-1 "
	echo "  Unschedulable Events: $(events "$ns" involvedObject.kind=PodGroup,reason=Unschedulable) on $(involved "$ns" involvedObject.kind=PodGroup,reason=Unschedulable)"
	check "too-big: an Unschedulable Event on each waiting gang's PodGroup" \
		test "$(involved "$ns" involvedObject.kind=PodGroup,reason=Unschedulable)" = "big short "
	check "too-big: no Scheduled Event in the namespace" \
		test "$(events "$ns" reason=Scheduled)" = 0
	free "$ns"
}

case_job() {
	local ns pgname
	ns=$(mkns job) || { fail "job: namespace"; return; }
	k create -f - >/dev/null <<EOF || { fail "job: the Job is created (spec.scheduling)"; return; }
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: $ns}
spec:
  parallelism: 3
  completions: 3
  scheduling:
    schedulingPolicy: {gang: {minCount: 3}}
  template:
    metadata:
      labels: {e2e-group: job}
      annotations: {sim.kube-batchd.io/duration: "2", scheduling.volcano.sh/queue-name: ml}
    spec:
      schedulerName: kube-batchd
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
EOF
	check "job: the Job controller makes a PodGroup of minCount 3" \
		wait_for 30 bash -c "[[ \$(kubectl --kubeconfig '$admin' get $PG -n '$ns' -o jsonpath='{.items[0].spec.schedulingPolicy.gang.minCount}') == 3 ]]"
	pgname=$(k get "$PG" -n "$ns" -o jsonpath='{.items[0].metadata.name}')
	echo "  PodGroup $ns/$pgname, Workload $(k get workloads.v1beta1.scheduling.k8s.io -n "$ns" -o name | tr '\n' ' ')"
	check "job: its pods name the PodGroup in spec.schedulingGroup" \
		wait_for 30 bash -c "[[ \$(kubectl --kubeconfig '$admin' get pods -n '$ns' -o jsonpath='{range .items[*]}{.spec.schedulingGroup.podGroupName}{\"\\n\"}{end}' | grep -cx '$pgname') == 3 ]]"
	check "job: the Job's 3 pods are bound whole" bound_whole "$ns" e2e-group=job 3 30
	check "job: the Job completes" \
		wait_for 60 bash -c "[[ \$(kubectl --kubeconfig '$admin' get job train -n '$ns' -o jsonpath='{.status.conditions[?(@.type==\"Complete\")].status}') == True ]]"
	check "job: the PodGroup's condition is True" test "$(pg_cond "$ns" "$pgname" status)" = True
	free "$ns"
}

case_fair() {
	local a b g
	a=$(mkns fair-a) || { fail "fair: namespace"; return; }
	b=$ns_fair_b
	k create namespace "$b" >/dev/null || { fail "fair: namespace $b"; return; }
	# Made while kube-batchd is down, so neither queue is there first.
	stop_sched
	for g in 0 1 2 3; do
		podgroup "$a" g$g 2 ml && pods "$a" g$g 2 1 || fail "fair: $a/g$g created"
		podgroup "$b" g$g 2 && pods "$b" g$g 2 1 || fail "fair: $b/g$g created"
	done
	start_sched || { fail "fair: kube-batchd starts again"; return; }
	check "fair: the cluster fills (8 of 16 pods bound)" \
		wait_for 30 bash -c "(( \$(kubectl --kubeconfig '$admin' get pods -n '$a' -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) + \$(kubectl --kubeconfig '$admin' get pods -n '$b' -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) == 8 ))"
	sleep 3 # let it settle: nothing may move after
	local ba bb partial=0
	ba=$(count_bound "$a" e2e-group)
	bb=$(count_bound "$b" e2e-group)
	echo "  bound: queue ml ($a) $ba cpu, queue research ($b) $bb cpu"
	check "fair: each queue gets half the cluster (4 cpu each)" test "$ba/$bb" = 4/4
	for g in 0 1 2 3; do
		local x y
		x=$(count_bound "$a" e2e-group=g$g)
		y=$(count_bound "$b" e2e-group=g$g)
		((x == 1)) && partial=$((partial + 1))
		((y == 1)) && partial=$((partial + 1))
	done
	check "fair: no gang partly bound" test "$partial" = 0
	free "$a" "$b"
}

case_log() {
	echo "  $(grep -c . "$sched_log") log lines"
	check "log: kube-batchd watches scheduling.k8s.io/v1beta1 PodGroups" \
		grep -q 'watching [0-9]* resources (PodGroups:.*scheduling.k8s.io/v1beta1' "$sched_log"
	# A watch started while the apiserver's watch cache of a CRD it has
	# just installed is still starting is answered 429 "storage is
	# (re)initializing" and retried after its Retry-After: worth a warning,
	# not a fault of either.
	local bad starting
	starting=$(grep -cE '^W[0-9]{4} .*watching ".*HTTP 429: .*storage is \(re\)initializing' "$sched_log")
	bad=$(grep -E '^[EW][0-9]{4} ' "$sched_log" | grep -vE '^W[0-9]{4} .*watching ".*HTTP 429: .*storage is \(re\)initializing')
	echo "  $starting warning(s) of a watch cache still starting (429, retried)"
	[[ -z $bad ]] || echo "$bad" | head -10 | sed 's/^/  /'
	check "log: no error or warning line (but those)" test -z "$bad"
	local reasons
	reasons=$(k get events -A -o jsonpath='{range .items[?(@.source.component=="kube-batchd")]}{.reason}{"\n"}{end}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
	echo "  kube-batchd's Events by reason: $reasons"
	check "log: kube-batchd wrote Events" test -n "$reasons"
	check "log: every kube-batchd Event has a known reason and a message" \
		test -z "$(k get events -A -o jsonpath='{range .items[?(@.source.component=="kube-batchd")]}{.reason}|{.message}{"\n"}{end}' |
			grep -vE '^(Scheduled|FailedScheduling|Unschedulable)\|.+$')"
}

for c in "${cases[@]}"; do
	case $c in
	gang) case_gang ;;
	too-big) case_too_big ;;
	job) case_job ;;
	fair) case_fair ;;
	log) case_log ;;
	*) fail "unknown case $c" ;;
	esac
done

echo "  $((SECONDS - t0)) s in all"
e2e_summary
((fails == 0))

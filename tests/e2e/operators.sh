#!/usr/bin/env bash
# End-to-end tests of kube-batchd with the real Kubeflow operators, built
# from their Go modules (tests/operators), against the local control plane
# (tests/cluster/up --kwok --controllers): kube-apiserver, the Job
# controller (the MPI launcher is a Job), kwok (bound pods run and finish).
#
#   tests/e2e/operators.sh [--build BUILDDIR] [--keep] [CASE...]
#
# Cases (default: all):
#   volcano  training-operator --gang-scheduler-name=volcano (volcano PodGroups,
#            pods made only once the group is Inqueue)
#   custom   training-operator --gang-scheduler-name=kube-batchd (scheduler-plugins
#            PodGroups scheduling.x-k8s.io/v1alpha1, the queue in an annotation)
#   foreign  volcano's own PodGroup, pods naming schedulerName volcano: left alone
#   template the pre-operator shape: parameter servers as a Deployment,
#            workers as a Job, one kube-batch PodGroup, claims for data
#            and logs (bound by the controller manager's PV binder)
#   mpi      MPI operator v2 (v2beta1 MPIJob), --gang-scheduling=kube-batchd
#   crds     kubectl create -k deploy/crds beside scheduler-plugins' own CRD:
#            only the missing CRDs made, none of pg/pgs/q taken (run it last:
#            it swaps cluster-wide CRDs)
# In volcano and custom: the seed's dist-mnist TFJob (2 PS + 4 one-GPU
# workers) and a PyTorchJob (1 master + 3 workers) bound whole, the job's
# queue honoured (a queue whose capability is too small holds the job), a
# job too big for the cluster holds nothing until room appears (a node added
# in volcano mode, another job deleted in custom mode) and then binds whole,
# the TFJob Succeeded once kwok finishes its workers.
# "Whole": sampled every 0.2 s, a gang is never seen partly bound for longer
# than KB_E2E_BIND_BURST seconds (default 1): its Bindings are separate API
# calls, so a sample may fall inside the burst that binds it.
# Prints one PASS or FAIL line per check; exit 0 only if every check passed;
# 77 (skip) without Go, kubectl, curl, openssl, flock, setsid or base64.
# Environment: KB_E2E_DIR (control-plane dir; default a fresh temp
# dir, shut down at the end unless --keep), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=operators e2e_help_end=34
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fixtures=$here/fixtures
opfix=$fixtures/operators
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(volcano custom foreign template mpi crds)
e2e_need go kubectl curl openssl flock setsid base64
[[ -x $root/tests/cluster/up && -x $root/tests/operators/build ]] ||
	{ echo "operators: SKIP: no tests/cluster/up or tests/operators/build" >&2; exit 77; }
e2e_binary
burst=${KB_E2E_BIND_BURST:-1}
e2e_dir kb-e2e-ops
sched_pid= op_pid=
cleanup() {
	stop_operator
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

t0=$SECONDS
# The operators: built (or found up to date) into the control plane's binary
# cache; the env file names the binaries and the modules' directories.
if ! "$root/tests/operators/build" --env "$dir.operators.env" >"$dir.build.log" 2>&1; then
	cat "$dir.build.log" >&2
	fail "the operators build (tests/operators/build)"
	exit 1
fi
# shellcheck source=/dev/null
source "$dir.operators.env"
rm -f "$dir.operators.env" "$dir.build.log"
# The controllers the operators' jobs need: Deployments, ReplicaSets and
# Jobs make pods; the PV binder and pvc-protection serve the template case's
# claims; the garbage collector deletes what a deleted Deployment or Job owns.
KB_CLUSTER_CONTROLLERS=deployment,replicaset,job,garbagecollector,persistentvolume-binder,pvc-protection \
	"$root/tests/cluster/up" --kwok --controllers "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; fail "the control plane starts (tests/cluster/up --kwok --controllers)"; exit 1; }
rm -f "$dir.up.log"
echo "  operators built and control plane up in $((SECONDS - t0)) s"
# shellcheck source=/dev/null
source "$dir/cluster.env"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
k() { kubectl --kubeconfig "$admin" "$@"; }

run=$(printf '%04x' $((RANDOM % 65536)))
mkns() { k create namespace "$1-$run" >/dev/null && echo "$1-$run"; }

# ---- kube-batchd -----------------------------------------------------------
# Two queues from the queue file: team-a, and tiny whose capability (2 cpu,
# 1 GPU) no training job here fits; the namespace op-mpi-tiny-RUN is mapped
# to tiny (the MPI operator's PodGroups can name no queue).
cat >"$dir/queues.yaml" <<EOF
queues:
- name: team-a
  weight: 1
- name: tiny
  weight: 1
  capability: {cpu: "2", nvidia.com/gpu: "1"}
  namespaces: [op-mpi-tiny-$run]
EOF
e2e_free_port sched_port || { fail "a free port for kube-batchd"; exit 1; }
start_sched() {
	sched_log=$dir/kube-batchd.log
	"$bin" --kubeconfig "$dir/scheduler.kubeconfig" --listen-address "127.0.0.1:$sched_port" \
		--schedule-period 200ms -v 2 --scheduler-conf "$fixtures/scheduler.conf" \
		--queue-conf "$dir/queues.yaml" >>"$sched_log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$sched_port" "$sched_pid" "$sched_log"
}
metric() { curl -s "http://127.0.0.1:$sched_port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# ---- the cluster -----------------------------------------------------------
# node NAME CPU GPUS: a Node that kwok keeps Ready.
node() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1, e2e.kube-batchd.io/node: "true"}}
status:
  capacity: {cpu: "$2", memory: 32Gi, pods: "110", nvidia.com/gpu: "$3"}
  allocatable: {cpu: "$2", memory: 32Gi, pods: "110", nvidia.com/gpu: "$3"}
EOF
}
# render FILE NAME=VALUE...: a fixture with its @NAME@ placeholders replaced.
render() {
	local f=$1 kv args=()
	shift
	for kv; do args+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
	sed "${args[@]}" "$f"
}
# pods_of NS SELECTOR: "name=node" lines of the pods the selector picks.
pods_of() { k get pods -n "$1" -l "$2" -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}'; }
count_pods() { pods_of "$1" "$2" | grep -c .; }
count_bound() { pods_of "$1" "$2" | grep -c '=.'; }

# bound_whole NS SELECTOR N SECONDS: samples the pods every 0.2 s until N are
# bound; fails if that does not happen in time, or if the gang was seen
# partly bound (0 < bound < N) over more than $burst s. Prints what it saw.
bound_whole() {
	local ns=$1 sel=$2 n=$3 secs=$4 b start=$SECONDS first= last= partial=0 now
	while ((SECONDS - start < secs)); do
		b=$(count_bound "$ns" "$sel")
		((b >= n)) && break
		if ((b > 0)); then
			now=$(date +%s.%N)
			[[ -n $first ]] || first=$now
			last=$now partial=$((partial + 1))
		fi
		sleep 0.2
	done
	local span=0
	[[ -n $first ]] && span=$(awk -v a="$first" -v b="$last" 'BEGIN {printf "%.2f", b - a}')
	echo "  $ns/$sel: $b of $n bound after $((SECONDS - start)) s; $partial partial sample(s) over ${span} s"
	((b == n)) && awk -v s="$span" -v m="$burst" 'BEGIN {exit !(s <= m)}'
}
# holds_nothing NS SELECTOR SECONDS: no pod of the selector is bound at any
# sample over SECONDS.
holds_nothing() {
	local ns=$1 sel=$2 secs=$3 start=$SECONDS b max=0
	while ((SECONDS - start < secs)); do
		b=$(count_bound "$ns" "$sel")
		((b > max)) && max=$b
		sleep 0.2
	done
	echo "  $ns/$sel: at most $max bound over $secs s ($(count_pods "$ns" "$sel") pods exist)"
	((max == 0))
}
# established CRD...: until each CRD is Established (kubectl wait refuses a
# CRD whose status has no conditions yet, right after its creation).
established() {
	local c
	for c; do
		wait_for 60 bash -c "[[ \$(kubectl --kubeconfig '$admin' get crd '$c' -o jsonpath='{.status.conditions[?(@.type==\"Established\")].status}') == True ]]" || return 1
	done
}
# job_condition NS KIND NAME TYPE: the status of the job's condition TYPE.
job_condition() { k get "$2" "$3" -n "$1" -o jsonpath="{.status.conditions[?(@.type==\"$4\")].status}"; }
# delete_job NS KIND NAME: the job, and what a garbage collector would remove
# (there is none): its pods, PodGroups, Services.
delete_job() {
	k delete "$2" "$3" -n "$1" --wait=false >/dev/null 2>&1
	k delete pods,services -n "$1" -l "training.kubeflow.org/job-name=$3" --grace-period=0 --force >/dev/null 2>&1
	k delete podgroups.scheduling.volcano.sh,podgroups.scheduling.x-k8s.io "$3" -n "$1" --ignore-not-found >/dev/null 2>&1
}

# ---- the operators ---------------------------------------------------------
# sa_kubeconfig NS SA FILE: a kubeconfig with a token of the ServiceAccount
# (TokenRequest), so the operator runs with exactly its ClusterRole.
sa_kubeconfig() {
	local token
	token=$(k create token "$2" -n "$1" --duration 4h) || return 1
	rm -f "$3"
	kubectl config --kubeconfig "$3" set-cluster local --server "$KB_APISERVER_URL" \
		--certificate-authority "$KB_CA_FILE" --embed-certs=true >/dev/null &&
		kubectl config --kubeconfig "$3" set-credentials "$2" --token "$token" >/dev/null &&
		kubectl config --kubeconfig "$3" set-context "$2" --cluster local --user "$2" >/dev/null &&
		kubectl config --kubeconfig "$3" use-context "$2" >/dev/null
}

# The training-operator's CRDs (only TFJob and PyTorchJob: its own MPIJob
# CRD, kubeflow.org/v1, would take the name mpijobs.kubeflow.org from the
# MPI operator's v2beta1 one), its ClusterRole and ServiceAccount from its
# module; the Secret its cert rotator fills; the ValidatingWebhookConfiguration
# it injects its CA into before it starts its controllers -- empty, because
# kube-apiserver cannot reach training-operator.kubeflow.svc here (no DNS,
# no endpoints), so the operator's validating webhooks are not called.
install_training_operator() {
	local m=$KB_TRAINING_OPERATOR_MODULE
	k create -f "$m/manifests/base/crds/kubeflow.org_tfjobs.yaml" \
		-f "$m/manifests/base/crds/kubeflow.org_pytorchjobs.yaml" >/dev/null &&
		established tfjobs.kubeflow.org pytorchjobs.kubeflow.org &&
		k create namespace kubeflow >/dev/null &&
		k create -n kubeflow -f "$m/manifests/base/rbac/service-account.yaml" >/dev/null &&
		k create -f "$m/manifests/base/rbac/role.yaml" >/dev/null &&
		k create clusterrolebinding training-operator --clusterrole training-operator \
			--serviceaccount kubeflow:training-operator >/dev/null &&
		k create secret generic training-operator-webhook-cert -n kubeflow >/dev/null &&
		printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: validator.training-operator.kubeflow.org}\nwebhooks: []\n' |
		k create -f - >/dev/null &&
		sa_kubeconfig kubeflow training-operator "$dir/training-operator.kubeconfig"
}

# start_training_operator GANG-SCHEDULER-NAME: the operator, as its
# Deployment runs it, with the webhook serving certificate that the kubelet
# would mount from the Secret at the fixed path
# /tmp/k8s-webhook-server/serving-certs: bind-mounted from DIR in a mount
# namespace of its own (unshare -m) where that is allowed, else written
# there. Waits for /readyz (certificates in place, controllers starting).
start_training_operator() {
	start_training_operator_once "$1" && return 0
	# v1.8.1 registers its controllers after its manager has started, and
	# one that fails exits the process with only "failed to set up
	# controllers" (seen once, for PyTorchJob in volcano mode, on a loaded
	# machine). Once more, saying so; a second failure fails the case.
	kill -0 "$op_pid" 2>/dev/null && return 1
	echo "  training-operator (--gang-scheduler-name=$1) exited while starting; started once more"
	mv "$op_log" "$op_log.first"
	start_training_operator_once "$1"
}
start_training_operator_once() {
	local mode=$1 certs=$dir/training-operator-certs crt i wrap=() target
	e2e_free_port op_metrics && e2e_free_port op_probe && e2e_free_port op_webhook || return 1
	rm -rf "$certs"; mkdir -p "$certs"
	target=$certs
	if unshare -m true 2>/dev/null; then
		# shellcheck disable=SC2016
		wrap=(unshare -m sh -c 'mkdir -p /tmp/k8s-webhook-server/serving-certs &&
			mount --bind "$0" /tmp/k8s-webhook-server/serving-certs && exec "$@"' "$certs")
	else
		target=/tmp/k8s-webhook-server/serving-certs
		mkdir -p "$target"
	fi
	op_log=$dir/training-operator-$mode.log
	# Without TMPDIR, as in its Deployment: controller-runtime reads the
	# certificates from $TMPDIR/k8s-webhook-server/serving-certs (Go's
	# os.TempDir), and a TMPDIR of the test's caller would move them.
	KUBECONFIG=$dir/training-operator.kubeconfig MY_POD_NAMESPACE=kubeflow setsid env -u TMPDIR "${wrap[@]}" \
		"$KB_TRAINING_OPERATOR" --gang-scheduler-name="$mode" \
		--enable-scheme=tfjob --enable-scheme=pytorchjob \
		--metrics-bind-address="127.0.0.1:$op_metrics" --health-probe-bind-address="127.0.0.1:$op_probe" \
		--webhook-server-port="$op_webhook" >"$op_log" 2>&1 </dev/null &
	op_pid=$!
	for ((i = 0; i < 120; i++)); do
		crt=$(k get secret training-operator-webhook-cert -n kubeflow -o jsonpath='{.data.tls\.crt}' 2>/dev/null)
		[[ -n $crt ]] && break
		kill -0 "$op_pid" 2>/dev/null || break
		sleep 0.25
	done
	[[ -n $crt ]] || { tail -20 "$op_log" >&2; return 1; }
	echo "$crt" | base64 -d >"$target/tls.crt"
	k get secret training-operator-webhook-cert -n kubeflow -o jsonpath='{.data.tls\.key}' | base64 -d >"$target/tls.key"
	for ((i = 0; i < 240; i++)); do
		[[ $(curl -s "http://127.0.0.1:$op_probe/readyz") == ok ]] && return 0
		kill -0 "$op_pid" 2>/dev/null || break
		sleep 0.25
	done
	tail -20 "$op_log" >&2
	return 1
}
stop_operator() {
	[[ -n $op_pid ]] || return 0
	kill -TERM "$op_pid" 2>/dev/null
	wait "$op_pid" 2>/dev/null
	op_pid=
}

# ---- cases -----------------------------------------------------------------

# case_training MODE: the training-operator with --gang-scheduler-name=MODE
# (volcano or kube-batchd).
case_training() {
	local mode=$1 label ns pgkind pgq tf=training.kubeflow.org/job-name
	label=$([[ $mode == volcano ]] && echo volcano || echo custom-name)
	[[ $mode == volcano ]] && pgkind=podgroups.scheduling.volcano.sh || pgkind=podgroups.scheduling.x-k8s.io
	ns=$(mkns "op-$label")
	node "$label-node-1" 8 4; node "$label-node-2" 8 4
	start_training_operator "$mode" || { fail "$label: training-operator starts"; return; }
	pass "$label: training-operator $KB_TRAINING_OPERATOR_VERSION --gang-scheduler-name=$mode is ready"

	# dist-mnist in queue team-a, its twin in queue tiny (capability 2 cpu).
	render "$opfix/tfjob-dist-mnist.yaml" NAME=dist-mnist QUEUE=team-a WORKERS=4 DURATION=12 | k create -n "$ns" -f - >/dev/null
	render "$opfix/tfjob-dist-mnist.yaml" NAME=tf-tiny QUEUE=tiny WORKERS=4 DURATION=12 | k create -n "$ns" -f - >/dev/null
	check "$label: TFJob dist-mnist (2 PS + 4 GPU workers, queue team-a): all 6 pods bound, whole" \
		bound_whole "$ns" "$tf=dist-mnist" 6 60
	check "$label: every dist-mnist pod names schedulerName kube-batchd" \
		test "$(k get pods -n "$ns" -l "$tf=dist-mnist" -o jsonpath='{range .items[*]}{.spec.schedulerName}{"\n"}{end}' | sort -u)" = kube-batchd
	if [[ $mode == volcano ]]; then
		pgq=$(k get "$pgkind" tf-tiny -n "$ns" -o jsonpath='{.spec.queue}')
	else
		pgq=$(k get "$pgkind" tf-tiny -n "$ns" -o jsonpath='{.metadata.annotations.scheduling\.volcano\.sh/queue-name}')
	fi
	check "$label: the operator's PodGroup tf-tiny names queue tiny (got \"$pgq\")" test "$pgq" = tiny
	check "$label: TFJob tf-tiny in queue tiny (capability 2 cpu, 1 GPU): nothing bound" \
		holds_nothing "$ns" "$tf=tf-tiny" 4
	if [[ $mode == volcano ]]; then
		check "$label: tf-tiny's PodGroup is not admitted (phase $(k get "$pgkind" tf-tiny -n "$ns" -o jsonpath='{.status.phase}')), so the operator made no pod" \
			test "$(k get "$pgkind" tf-tiny -n "$ns" -o jsonpath='{.status.phase}')/$(count_pods "$ns" "$tf=tf-tiny")" = Pending/0
	else
		check "$label: tf-tiny's 6 pods exist (the operator does not wait in this mode) and none is bound" \
			test "$(count_pods "$ns" "$tf=tf-tiny")/$(count_bound "$ns" "$tf=tf-tiny")" = 6/0
	fi
	local start=$SECONDS
	wait_for 90 bash -c "[[ \$(kubectl --kubeconfig '$admin' get tfjob dist-mnist -n '$ns' -o jsonpath='{.status.conditions[?(@.type==\"Succeeded\")].status}') == True ]]"
	check "$label: TFJob dist-mnist is Succeeded once kwok finished its workers (after $((SECONDS - start)) s more)" \
		test "$(job_condition "$ns" tfjob dist-mnist Succeeded)" = True
	delete_job "$ns" tfjob dist-mnist
	delete_job "$ns" tfjob tf-tiny

	# A job whose pod templates name no scheduler: the operator writes its
	# gang scheduler's name there -- volcano's pods are not ours; in
	# custom-name mode that name is kube-batchd.
	local names
	render "$opfix/pytorchjob.yaml" NAME=noname QUEUE=team-a | sed '/schedulerName: kube-batchd/d' | k create -n "$ns" -f - >/dev/null
	if [[ $mode == volcano ]]; then
		wait_for 30 bash -c "(( \$(kubectl --kubeconfig '$admin' get pods -n '$ns' -l '$tf=noname' -o name | grep -c .) == 4 ))"
		names=$(k get pods -n "$ns" -l "$tf=noname" -o jsonpath='{range .items[*]}{.spec.schedulerName}{"\n"}{end}' | sort | uniq -c | awk '{printf "%s %s ", $1, $2}')
		check "$label: PyTorchJob noname, templates without schedulerName: the operator gave its 4 pods 'volcano' (got: $names)" \
			test "$names" = "4 volcano "
		check "$label: kube-batchd binds none of noname's pods, which name volcano" holds_nothing "$ns" "$tf=noname" 3
		check "$label: kube-batchd's log says noname's group is volcano's, left alone" \
			grep -q "PodGroup \"$ns/noname\" left alone: its 4 pods name schedulerName \"volcano\"" "$sched_log"
	else
		check "$label: PyTorchJob noname, templates without schedulerName: all 4 pods bound, whole" \
			bound_whole "$ns" "$tf=noname" 4 60
		names=$(k get pods -n "$ns" -l "$tf=noname" -o jsonpath='{range .items[*]}{.spec.schedulerName}{"\n"}{end}' | sort -u)
		check "$label: the operator gave noname's pods schedulerName kube-batchd (got: $names)" test "$names" = kube-batchd
	fi
	delete_job "$ns" pytorchjob noname

	render "$opfix/pytorchjob.yaml" NAME=pt QUEUE=team-a | k create -n "$ns" -f - >/dev/null
	check "$label: PyTorchJob pt (1 master + 3 GPU workers, queue team-a): all 4 pods bound, whole" \
		bound_whole "$ns" "$tf=pt" 4 60

	# 8 GPUs, pt holds 4; big wants 6.
	render "$opfix/tfjob-dist-mnist.yaml" NAME=big QUEUE=team-a WORKERS=6 DURATION=100000 | k create -n "$ns" -f - >/dev/null
	check "$label: TFJob big (2 PS + 6 GPU workers) with 4 GPUs free: nothing bound" \
		holds_nothing "$ns" "$tf=big" 5
	if [[ $mode == volcano ]]; then
		node "$label-node-3" 8 4
		check "$label: a third node (4 GPUs) added: big's 8 pods bound, whole" bound_whole "$ns" "$tf=big" 8 60
	else
		check "$label: big's 8 pods exist while they wait" test "$(count_pods "$ns" "$tf=big")" = 8
		delete_job "$ns" pytorchjob pt
		check "$label: PyTorchJob pt deleted: big's 8 pods bound, whole" bound_whole "$ns" "$tf=big" 8 60
	fi
	check "$label: no Binding refused so far ($(metric kube_batchd_bind_failures_total))" \
		test "$(metric kube_batchd_bind_failures_total)" = 0
	stop_operator
	delete_job "$ns" tfjob big
	delete_job "$ns" pytorchjob pt
	k delete nodes -l e2e.kube-batchd.io/node=true >/dev/null 2>&1
}

# volcano's own work (there is no volcano here), two ways:
# - vc-job: a volcano PodGroup whose pods name schedulerName volcano, the
#   pods made first so that kube-batchd knows them when it first sees the
#   group. kube-batchd binds none of them and writes nothing on the group;
#   once "volcano" has bound them (the test posts the Bindings as volcano
#   would), they still take their node's room.
# - vc-pending: a volcano PodGroup as volcano's job controller makes it,
#   owned by its batch.volcano.sh Job and before any pod: volcano's
#   scheduler is the one to admit it (Inqueue), not kube-batchd.
# vc_podgroup NS NAME: a volcano PodGroup of minMember 2 owned by the
# volcano Job NAME (batch.volcano.sh/v1alpha1), as volcano makes it.
vc_podgroup() {
	cat <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $2
  namespace: $1
  ownerReferences:
  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: $2, uid: 00000000-0000-4000-8000-$(printf '%012d' $RANDOM), controller: true, blockOwnerDeletion: true}
spec: {minMember: 2, queue: default, minResources: {cpu: "4"}}
EOF
}
case_foreign() {
	local ns st s0 s1 ev mf i
	ns=$(mkns op-foreign)
	node foreign-node-1 4 0
	s0=$(metric kube_batchd_sessions_total)
	{
		for i in 0 1; do
			cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: vc-job-$i, namespace: $ns, annotations: {scheduling.k8s.io/group-name: vc-job}}
spec:
  schedulerName: volcano
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "2"}}}]
EOF
		done
	} | k create -f - >/dev/null
	wait_for 10 bash -c "(( \$(kubectl --kubeconfig '$admin' get pods -n '$ns' -o name | grep -c .) == 2 ))"
	sleep 0.5
	vc_podgroup "$ns" vc-job | k create -f - >/dev/null
	sleep 4
	s1=$(metric kube_batchd_sessions_total)
	check "foreign: kube-batchd ran sessions since the group was made ($s0 -> $s1)" test "${s1:-0}" -gt "${s0:-0}"
	# A kubectl that fails says so (never an empty answer that passes).
	nodes=$(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.spec.nodeName}{end}') || nodes="(kubectl failed)"
	check "foreign: none of the volcano pods is bound (nodes: '${nodes}')" test -z "$nodes"
	# Nothing but kube-batchd could write it here (no volcano runs): its
	# status must stay as made (none), and no field manager but kubectl's.
	st=$(k get podgroups.scheduling.volcano.sh vc-job -n "$ns" -o jsonpath='{.status}' 2>&1 || echo "not found")
	mf=$(k get podgroups.scheduling.volcano.sh vc-job -n "$ns" --show-managed-fields -o jsonpath='{range .metadata.managedFields[*]}{.manager} {end}')
	check "foreign: the volcano PodGroup's status is not written (status '${st}', field managers: $mf)" \
		test -z "$st" -a "$mf" = "kubectl-create "
	ev=$(k get events -n "$ns" -o jsonpath='{range .items[*]}{.involvedObject.kind}/{.involvedObject.name} {.reason}; {end}') ||
		ev="(kubectl failed)"
	check "foreign: no Event about the PodGroup or its pods (got: ${ev:-none})" test -z "$ev"
	# volcano binds them: 4 of the node's 4 cpu.
	for i in 0 1; do
		printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"vc-job-%s"},"target":{"apiVersion":"v1","kind":"Node","name":"foreign-node-1"}}' "$i" |
			k create --raw "/api/v1/namespaces/$ns/pods/vc-job-$i/binding" -f - >/dev/null
	done
	# Pinned to that node: the other cases' nodes may have room (when one of
	# them failed to fill its own).
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: ours, namespace: %s}\nspec:\n  schedulerName: kube-batchd\n  nodeSelector: {kubernetes.io/hostname: foreign-node-1}\n  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]\n' "$ns" |
		k create -f - >/dev/null
	sleep 3
	check "foreign: a pod of ours finds no room on the node volcano's pods fill" \
		test -z "$(k get pod ours -n "$ns" -o jsonpath='{.spec.nodeName}')"
	st=$(k get podgroups.scheduling.volcano.sh vc-job -n "$ns" -o jsonpath='{.status}' 2>&1 || echo "not found")
	check "foreign: the volcano PodGroup's status is still not written once its pods run (status '${st}')" test -z "$st"
	# ...and it is bound once they are gone (so the check above could fail).
	k delete pods vc-job-0 vc-job-1 -n "$ns" --grace-period=0 --force >/dev/null 2>&1
	check "foreign: with volcano's pods gone, our pod is bound" \
		wait_for 20 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod ours -n '$ns' -o jsonpath='{.spec.nodeName}') ]]"
	k delete pod ours -n "$ns" --grace-period=0 --force >/dev/null 2>&1 # room for it
	vc_podgroup "$ns" vc-pending | k create -f - >/dev/null
	sleep 4
	st=$(k get podgroups.scheduling.volcano.sh vc-pending -n "$ns" -o jsonpath='{.status}' 2>&1 || echo "not found")
	check "foreign: volcano's PodGroup made by its job controller, before its pods, is not admitted by kube-batchd (status '${st}')" \
		test -z "$st"
	k delete pods --all -n "$ns" --grace-period=0 --force >/dev/null 2>&1
	k delete podgroups.scheduling.volcano.sh --all -n "$ns" >/dev/null 2>&1
	k delete nodes -l e2e.kube-batchd.io/node=true >/dev/null 2>&1
}

# The job as it was written before the operators (fixtures/operators/
# tf-template.yaml): parameter servers as a Deployment, workers as a Job,
# a kube-batch PodGroup, claims for data and logs bound by the controller
# manager's PV binder. Bound whole; a parameter server the Deployment
# replaces is bound beside its running gang; a second job too big for the
# GPUs left holds nothing and binds whole once the first is deleted.
# tf_template NS NAME PS WORKERS: the rendered job and its two volumes.
tf_template() {
	local v
	for v in data logs; do
		cat <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1-$2-$v, labels: {e2e.kube-batchd.io/pv: "true"}}
spec:
  storageClassName: $2-manual
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  hostPath: {path: /tmp/kube-batchd-e2e/$2/$v}
---
EOF
	done
	render "$fixtures/operators/tf-template.yaml" NAME="$2" PS="$3" WORKERS="$4" \
		MIN="$(($3 + $4))" QUEUE=team-a
}
delete_template() {
	k delete deployment "$2-ps" -n "$1" >/dev/null 2>&1
	k delete job "$2-worker" -n "$1" >/dev/null 2>&1
	k delete pods -l "tfjob=$2" -n "$1" --grace-period=0 --force >/dev/null 2>&1
}
case_template() {
	local ns ps pvc
	ns=$(mkns op-template)
	node tmpl-node-1 8 4
	node tmpl-node-2 8 4
	tf_template "$ns" tfa 2 4 | k create -n "$ns" -f - >/dev/null ||
		{ fail "template: creating the Deployment + Job job"; return; }
	check "template: the claims tfa-data and tfa-logs are Bound by the PV binder" \
		wait_for 60 bash -c "[[ \$(kubectl --kubeconfig '$admin' get pvc -n '$ns' -o jsonpath='{.items[*].status.phase}') == 'Bound Bound' ]]"
	check "template: tfa (2 PS in a Deployment + 4 GPU workers in a Job): all 6 pods bound, whole" \
		bound_whole "$ns" tfjob=tfa 6 60
	check "template: tfa's PodGroup is Running" \
		wait_for 10 bash -c "[[ \$(kubectl --kubeconfig '$admin' get podgroups.scheduling.incubator.k8s.io tfa -n '$ns' -o jsonpath='{.status.phase}') == Running ]]"
	ps=$(k get pods -n "$ns" -l tfjob=tfa,role=ps -o jsonpath='{.items[0].metadata.name}')
	k delete pod "$ps" -n "$ns" --grace-period=0 --force >/dev/null 2>&1
	check "template: the parameter server the Deployment made in place of $ps is bound beside its running gang" \
		wait_for 20 bash -c "(( \$(kubectl --kubeconfig '$admin' get pods -n '$ns' -l tfjob=tfa,role=ps -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{\"\\n\"}{end}' | grep -v '^$ps=' | grep -c '=.') == 2 ))"
	tf_template "$ns" tfb 2 6 | k create -n "$ns" -f - >/dev/null ||
		{ fail "template: creating the second job"; return; }
	check "template: tfb (2 PS + 6 GPU workers) with 4 GPUs free: nothing bound" \
		holds_nothing "$ns" tfjob=tfb 6
	delete_template "$ns" tfa
	check "template: tfa deleted: tfb's 8 pods bound, whole" \
		bound_whole "$ns" tfjob=tfb 8 60
	pvc=$(k get pods -n "$ns" -l tfjob=tfb,role=worker -o jsonpath='{.items[0].spec.volumes[*].persistentVolumeClaim.claimName}')
	check "template: tfb's workers mount its claims (got: $pvc)" test "$pvc" = "tfb-data tfb-logs"
	delete_template "$ns" tfb
	k delete pvc --all -n "$ns" --wait=false >/dev/null 2>&1
	k delete pv -l e2e.kube-batchd.io/pv=true --wait=false >/dev/null 2>&1
	k delete nodes -l e2e.kube-batchd.io/node=true >/dev/null 2>&1
}

# The MPI operator v2: its CRD (kubeflow.org/v2beta1) and ClusterRole from
# its module, ServiceAccount and leader-election namespace mpi-operator.
# Its health endpoint is on :8080 of every interface, fixed in its code.
case_mpi() {
	local m=$KB_MPI_OPERATOR_MODULE ns nst i minm sel
	ns=$(mkns op-mpi)
	if (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null; then
		fail "mpi: port 8080 is taken; the MPI operator's health endpoint (fixed at :8080) cannot start"
		return
	fi
	{ k create -f "$m/manifests/base/kubeflow.org_mpijobs.yaml" >/dev/null &&
		established mpijobs.kubeflow.org &&
		k create namespace mpi-operator >/dev/null &&
		k create -n mpi-operator -f "$m/manifests/base/service-account.yaml" >/dev/null &&
		k create -f "$m/manifests/base/cluster-role.yaml" >/dev/null &&
		k create clusterrolebinding mpi-operator --clusterrole mpi-operator --serviceaccount mpi-operator:mpi-operator >/dev/null &&
		sa_kubeconfig mpi-operator mpi-operator "$dir/mpi-operator.kubeconfig"; } ||
		{ fail "mpi: installing the MPI operator's CRD and RBAC from its module"; return; }
	node mpi-node-1 8 4; node mpi-node-2 8 4
	op_log=$dir/mpi-operator.log
	setsid "$KB_MPI_OPERATOR" --kubeConfig "$dir/mpi-operator.kubeconfig" --gang-scheduling=kube-batchd \
		--lock-namespace mpi-operator -alsologtostderr >"$op_log" 2>&1 </dev/null &
	op_pid=$!
	check "mpi: MPI operator $KB_MPI_OPERATOR_VERSION leads (its /healthz on :8080)" \
		wait_for 60 bash -c "grep -q 'Leading started' '$op_log' && [[ \$(curl -s http://127.0.0.1:8080/healthz) == ok ]]"
	render "$opfix/mpijob.yaml" NAME=pi | k create -n "$ns" -f - >/dev/null
	sel=scheduling.x-k8s.io/pod-group=pi
	wait_for 30 k get podgroups.scheduling.x-k8s.io pi -n "$ns"
	minm=$(k get podgroups.scheduling.x-k8s.io pi -n "$ns" -o jsonpath='{.spec.minMember}')
	check "mpi: the operator made a scheduler-plugins PodGroup pi of minMember 5 (got \"$minm\")" test "$minm" = 5
	check "mpi: MPIJob pi (1 launcher + 4 GPU workers): all 5 pods bound, whole" bound_whole "$ns" "$sel" 5 90
	check "mpi: the launcher pod (made by the Job controller) is among them" \
		test "$(k get pods -n "$ns" -l "$sel,training.kubeflow.org/job-role=launcher" -o jsonpath='{.items[*].spec.nodeName}' | wc -w)" = 1
	check "mpi: every pod names schedulerName kube-batchd" \
		test "$(k get pods -n "$ns" -l "$sel" -o jsonpath='{range .items[*]}{.spec.schedulerName}{"\n"}{end}' | sort -u)" = kube-batchd
	wait_for 30 bash -c "[[ \$(kubectl --kubeconfig '$admin' get mpijob pi -n '$ns' -o jsonpath='{.status.conditions[?(@.type==\"Running\")].status}') == True ]]"
	check "mpi: MPIJob pi reports Running" test "$(job_condition "$ns" mpijob pi Running)" = True
	# The same job in a namespace the queue file maps to queue tiny
	# (capability 2 cpu, 1 GPU).
	nst=$(mkns op-mpi-tiny)
	render "$opfix/mpijob.yaml" NAME=pi | k create -n "$nst" -f - >/dev/null
	wait_for 30 bash -c "(( \$(kubectl --kubeconfig '$admin' get pods -n '$nst' -l '$sel' -o name | grep -c .) >= 5 ))"
	check "mpi: the same MPIJob in namespace $nst, mapped to queue tiny: nothing bound" \
		holds_nothing "$nst" "$sel" 4
	stop_operator
	for n in "$ns" "$nst"; do
		k delete mpijob pi -n "$n" --wait=false >/dev/null 2>&1
		k delete jobs --all -n "$n" --wait=false >/dev/null 2>&1
		k delete pods --all -n "$n" --grace-period=0 --force >/dev/null 2>&1
	done
	k delete nodes -l e2e.kube-batchd.io/node=true >/dev/null 2>&1
}

# deploy/crds beside the projects that own those CRDs: scheduler-plugins'
# own coscheduling CRD (from its Go module, short names pg and pgs) stands
# in for an installed scheduler-plugins; volcano's Queue CRD is missing.
# `kubectl create -k deploy/crds` makes the missing one, keeps the others.
case_crds() {
	local crd=$KB_SCHEDULER_PLUGINS_MODULE/manifests/coscheduling/crd.yaml out rc=0 sn pg q
	sn=$(kubectl kustomize "$root/deploy/crds" | k create --dry-run=client -f - \
		-o jsonpath='{.metadata.name}={.spec.names.shortNames}{"\n"}')
	echo "$sn" | sed 's/^/  /'
	check "crds: deploy/crds has 5 CRDs, none with the short name pg, pgs or q" \
		test "$(grep -c . <<<"$sn")/$(grep -Ec '"(pg|pgs|q)"' <<<"$sn")" = 5/0
	k replace -f "$crd" >/dev/null && established podgroups.scheduling.x-k8s.io ||
		{ fail "crds: scheduler-plugins' own CRD installed in place of ours"; return; }
	k delete crd queues.scheduling.volcano.sh >/dev/null &&
		wait_for 30 bash -c "! kubectl --kubeconfig '$admin' get crd queues.scheduling.volcano.sh"
	out=$(k create -k "$root/deploy/crds" 2>&1) || rc=$?
	echo "$out" | sed 's/^/  /'
	check "crds: kubectl create -k deploy/crds makes the missing volcano Queue CRD, AlreadyExists for the 4 others (exit $rc)" \
		test "$rc/$(grep -c ' created$' <<<"$out")/$(grep -c AlreadyExists <<<"$out")/$(grep -c 'queues.scheduling.volcano.sh created' <<<"$out")" = 1/1/4/1
	sn=$(k get crd podgroups.scheduling.x-k8s.io -o jsonpath='{.spec.names.shortNames}')
	check "crds: scheduler-plugins' CRD is kept as it was (short names $sn, no label of ours)" \
		test "$sn/$(k get crd podgroups.scheduling.x-k8s.io -o jsonpath='{.metadata.labels.app\.kubernetes\.io/part-of}')" = '["pg","pgs"]/'
	check "crds: volcano's Queue CRD made again is Established" established queues.scheduling.volcano.sh
	pg=$(k api-resources --no-headers | awk '$2 ~ /(^|,)pg(,|$)/ {print $1 "." $3}' | tr '\n' ' ')
	q=$(k api-resources --no-headers | awk 'NF == 5 && $2 ~ /(^|,)q(,|$)/ {print $1 "." $3}' | tr '\n' ' ')
	check "crds: short name pg means scheduler-plugins' PodGroups only (got: $pg), q nothing of ours (got: ${q:-none})" \
		test "$pg/$q" = "podgroups.scheduling.x-k8s.io/v1alpha1 /"
}

start_sched || { fail "kube-batchd starts (log: $sched_log)"; exit 1; }
if [[ " ${cases[*]} " == *" volcano "* || " ${cases[*]} " == *" custom "* ]]; then
	install_training_operator || { fail "installing the training-operator's CRDs and RBAC from its module"; cases=(${cases[@]/volcano/}); cases=(${cases[@]/custom/}); }
fi
for c in "${cases[@]}"; do
	t=$SECONDS
	case $c in
	volcano) case_training volcano ;;
	custom) case_training kube-batchd ;;
	foreign) case_foreign ;;
	template) case_template ;;
	mpi) case_mpi ;;
	crds) case_crds ;;
	*) fail "unknown case $c" ;;
	esac
	echo "  case $c: $((SECONDS - t)) s"
done
e2e_invariants_checked
echo "operators: $passes passed, $fails failed ($((SECONDS - t0)) s)"
((fails == 0))

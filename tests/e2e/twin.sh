#!/usr/bin/env bash
# The simulator as the cluster's twin: every scenario under tests/scenarios/
# whose outcome does not depend on virtual time is run twice, through
# `kube-batchd simulate` and against the local control plane (tests/cluster/up
# --kwok: the real kube-apiserver, kwok for the kubelets) with the daemon
# running, its objects created by one `kubectl create -f` as a user would.
# The two outcomes must agree:
#   - the pods kube-batchd bound (pods bound in the manifests left aside);
#   - the pods of ours left pending;
#   - the placements, up to nodes that are alike (same allocatable, labels
#     but the hostname, kube-batchd.io/ annotations, taints and
#     schedulability): each bound pod's node class, and which pods share a
#     node (one renaming of alike nodes must explain every placement).
# A mismatch prints both outcomes.
#
#   tests/e2e/twin.sh [--build BUILDDIR] [--keep] [SCENARIO...]
#
# Both sides get the same documents: the scenario's, with what the API
# requires and the simulator does not (container images, limits equal to
# the requests of extended resources), without creationTimestamp, which the
# API sets itself to the second, and with the pods and PodGroups last in
# namespace/name order, so that the API's timestamps grow in the order both
# break ties in. Pods that arrive later in the simulator
# (sim.kube-batchd.io/arrival) are created in waves, one per arrival time,
# each once the cluster has settled on the one before (the simulator's
# arrivals are 10 s or so apart, past its sessions' work).
# Scenarios left out, each said with its reason on a SKIP line: those that
# use virtual time otherwise (sim.kube-batchd.io/duration, bound_at,
# max_time_ms, eviction gaps), expect an error, start from
# finished pods, hold an object the API refuses or a kind it does not serve
# (a newer Kubernetes' gang API: k8s-gang.sh). Where the simulator evicts
# (preempt, reclaim), the pods it evicts must be those the cluster deleted;
# no controller makes them again here, so they are left out of the rest of
# the comparison on both sides.
# Prints one PASS or FAIL line per scenario (and RETRY before a second run,
# below); exit 0 only if every compared scenario agreed; 77 (skip)
# without kubectl, curl or python3.
# Environment: KB_E2E_DIR (control-plane dir; default a fresh temp dir, shut
# down at the end unless --keep), KUBE_BATCHD (the binary), KB_TWIN_DAEMON_ARGS
# (more daemon flags, e.g. "--schedule-delay 0 --schedule-period 20ms" to see
# the twin catch a daemon that decides by arrival), KB_TWIN_SCHEDULER
# (kube-batchd, the default, or kube-scheduler: the cluster side is then the
# upstream kube-scheduler built from tests/cluster's pinned module, with one
# profile named kube-batchd, and only the scenarios whose rules are
# kube-scheduler's are compared: no PodGroup, no queue or scheduler
# configuration, no kube-batchd annotation, nothing evicted; the pods bound
# and the pods left waiting must be the same, the nodes are not compared:
# upstream picks at random among nodes that score alike).
set -uo pipefail

e2e_name=twin e2e_help_end=48
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_args "$@"
e2e_need kubectl curl python3 flock setsid openssl
e2e_binary
e2e_dir kb-twin
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

counterpart=${KB_TWIN_SCHEDULER:-kube-batchd}
case $counterpart in
kube-batchd) ;;
kube-scheduler)
	# Built like the control plane (tests/cluster/lib.sh), stamp and all.
	. "$root/tests/cluster/lib.sh"
	kbin=${KB_CLUSTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-batchd/cluster-bin}
	mkdir -p "$kbin"
	kb_build_kube_scheduler "$kbin" || { fail "kube-scheduler builds from tests/cluster's module"; exit 1; }
	kube_scheduler=$kbin/kube-scheduler
	;;
*) echo "twin: KB_TWIN_SCHEDULER must be kube-batchd or kube-scheduler, got \"$counterpart\"" >&2; exit 2 ;;
esac

"$root/tests/cluster/up" --kwok "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; fail "the control plane starts (tests/cluster/up --kwok)"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
e2e_free_port || { fail "a free port for kube-batchd"; exit 1; }

# start_sched SCENARIO_DIR: the daemon with the scenario's configuration, a
# session once changes have stopped for 1 s and a period of 5 s, which
# bounds how long a burst may last. Longer than the defaults (150 ms, 1 s):
# the test compares decisions, and kubectl on a loaded 2-core machine has
# taken 130 ms per object, 2 s for a scenario. Waits until /healthz says
# its cache is synced.
start_sched() {
	[[ $counterpart == kube-scheduler ]] && { start_kube_scheduler "$1"; return; }
	local s=$1 args=()
	[[ -f $s/scheduler-conf.yaml ]] && args+=(--scheduler-conf "$s/scheduler-conf.yaml")
	[[ -f $s/queue-conf.yaml ]] && args+=(--queue-conf "$s/queue-conf.yaml")
	sched_log=$dir/$(basename "$s").log
	"$bin" --kubeconfig "$dir/scheduler.kubeconfig" --listen-address "127.0.0.1:$port" \
		--schedule-delay 1s --schedule-period 5s -v 2 "${args[@]}" ${KB_TWIN_DAEMON_ARGS:-} \
		>"$sched_log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$sched_log"
}

# start_kube_scheduler SCENARIO_DIR: upstream kube-scheduler, its one profile
# named kube-batchd (the scenarios' schedulerName), no leader election;
# waits for its /healthz.
start_kube_scheduler() {
	sched_log=$dir/$(basename "$1").log
	cat >"$dir/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$admin"}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: kube-batchd
EOF
	"$kube_scheduler" --config "$dir/kube-scheduler.yaml" --bind-address 127.0.0.1 \
		--secure-port "$port" -v 2 >"$sched_log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$sched_log" https
}

# why_skip SCENARIO_DIR: prints why the scenario is not compared, or nothing.
why_skip() {
	local s=$1
	if [[ $counterpart == kube-scheduler ]]; then
		[[ -f $s/scheduler-conf.yaml || -f $s/queue-conf.yaml ]] &&
			{ echo "it configures kube-batchd's actions or queues"; return; }
		grep -qE 'kind: *PodGroup|group-name|pod-group|kind: *Queue|kube-batchd\.io/' "${files[@]}" &&
			{ echo "it uses gangs, queues or kube-batchd's annotations (not kube-scheduler's rules)"; return; }
		grep -qE 'aliyun\.com/|volcano\.sh/vgpu|nvidia\.com/gpu\.(replicas|sharing)' "${files[@]}" &&
			{ echo "it uses a device plugin's sharing rules, which kube-scheduler does not apply"; return; }
	fi
	grep -qE '^error:' "$s/expect.yaml" && { echo "expects an error"; return; }
	grep -qE 'kind: *(PersistentVolumeClaim|PersistentVolume|StorageClass)' "${files[@]}" &&
		{ echo "it uses volumes, whose binding needs the PV controller the twin's control plane does not run (tests/e2e/volumes.sh runs it)"; return; }
	grep -qE '^(bound_at|max_time_ms|min_eviction_gap_ms):' "$s/expect.yaml" &&
		{ echo "its expectations use virtual time"; return; }
	grep -qE 'sim\.kube-batchd\.io/duration' "${files[@]}" &&
		{ echo "its pods finish in virtual time"; return; }
	grep -qE 'type: *Ready, *status: *"?(False|Unknown)' "${files[@]}" &&
		{ echo "a node is not Ready, and kwok (--manage-all-nodes) makes every node Ready"; return; }
	grep -qE 'phase: (Succeeded|Failed)' "${files[@]}" &&
		{ echo "it starts from finished pods, which the API cannot be given"; return; }
}

# The objects a scenario made, deleted, and every pod gone.
reset_cluster() {
	local kinds=pods,podgroups.scheduling.incubator.k8s.io,podgroups.scheduling.volcano.sh,podgroups.scheduling.x-k8s.io,podgroups.scheduling.sigs.k8s.io
	k delete "$kinds" --all -A --force --grace-period=0 --wait=false >/dev/null 2>&1
	k delete queues.scheduling.volcano.sh,queues.scheduling.incubator.k8s.io --all --wait=false >/dev/null 2>&1
	k delete nodes --all --wait=false >/dev/null 2>&1
	k delete priorityclasses -l twin.kube-batchd.io/scenario --wait=false >/dev/null 2>&1
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -z $(k get pods -A -o name 2>/dev/null) && -z $(k get nodes -o name 2>/dev/null) ]] && return 0
		sleep 0.2
	done
	return 1
}

# create_wave FILE: one create, as a user would: every object of FILE in one
# burst, in its order. An object the API refuses (validation, admission) is
# a scenario the API cannot be given: said (SKIP), not compared. Status 1 then, or when the
# create fails otherwise (FAIL). The API stamps creationTimestamp to the
# second and the simulator's objects of a wave share one creation time:
# it starts just after a second begins, so that a burst shorter than a
# second gets one timestamp too.
# The longest create of the scenario so far, in ms, is kept in slowest_ms.
create_wave() {
	sleep "0.$(printf '%03d' $((1000 - 10#$(date +%N | cut -c1-3))))"
	local t0=$((${EPOCHREALTIME/./} / 1000)) rc=0 took
	k create -f "$1" >"$1.log" 2>&1 || rc=$?
	took=$((${EPOCHREALTIME/./} / 1000 - t0))
	((took > slowest_ms)) && slowest_ms=$took
	((rc == 0)) && return 0
	# Validation, or an admission plugin (priority: a pod's
	# preemptionPolicy against its PriorityClass's).
	if grep -qE 'is (invalid|forbidden): ' "$1.log"; then
		skip "$name: the API refuses it: $(grep -m1 -oE 'is (invalid|forbidden): .*' "$1.log" | head -c 200)"
	else
		fail "$name: kubectl create -f ${1##*/}: $(head -c 300 "$1.log")"
	fi
	return 1
}

# decisions: what kube-batchd's /metrics say it has done, one line:
# "PENDING SESSIONS BINDS EVICTIONS BIND_FAILURES EVICTION_FAILURES" (the
# requests to the API in flight, then counters); empty when it does not
# answer.
decisions() {
	curl -s --max-time 2 "http://127.0.0.1:$port/metrics" | awk '
		$1 ~ /^kube_batchd_(api_requests_pending|(sessions|binds|evictions|bind_failures|eviction_failures)_total)$/ { v[$1] = $2; n++ }
		END { if (n == 6) print v["kube_batchd_api_requests_pending"], v["kube_batchd_sessions_total"], v["kube_batchd_binds_total"], v["kube_batchd_evictions_total"], v["kube_batchd_bind_failures_total"], v["kube_batchd_eviction_failures_total"] }'
}

# settle [SESSIONS]: until the cluster side has stopped deciding, at most
# 60 s. kube-batchd: its decisions, read every quarter second, show a
# session past SESSIONS (the count before the wave was created), and then,
# for 2.5 s, no new session, binding or eviction (failed ones included) and
# no request to the API in flight. A change brings a session one
# --schedule-delay (1 s) after it, a burst's at most four delays after its
# first change; a session's own bindings and evictions are changes, so a
# decision is followed by another session, and 2.5 s without one is past
# every session a change can bring. kube-scheduler: the bound set unchanged
# over 6 s of the clock (more than its retry of pods left waiting), read
# every half second.
settle() {
	[[ $counterpart == kube-scheduler ]] && { settle_bound_set; return; }
	local before=${1:-0} since now end d prev= sessions
	since=$((${EPOCHREALTIME/./} / 1000))
	end=$((since + 60000))
	while kill -0 "$sched_pid" 2>/dev/null; do
		now=$((${EPOCHREALTIME/./} / 1000))
		d=$(decisions)
		if [[ -z $d || $d != "$prev" || ${d%% *} != 0 ]]; then prev=$d since=$now; fi
		((now >= end)) && break
		read -r _ sessions _ <<<"$d"
		((${sessions:-0} > before && now - since >= 2500)) && break
		sleep 0.25
	done
}

settle_bound_set() {
	local since prev= now cur end
	since=$((${EPOCHREALTIME/./} / 1000))
	end=$((since + 60000))
	while :; do
		sleep 0.5
		now=$((${EPOCHREALTIME/./} / 1000))
		cur=$(k get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.spec.nodeName} {end}')
		if [[ $cur != "$prev" ]]; then prev=$cur since=$now; fi
		((now - since >= 6000 || now >= end)) && break
	done
}

scenarios=()
if ((${#e2e_cases[@]})); then
	for s in "${e2e_cases[@]}"; do scenarios+=("$root/tests/scenarios/$s"); done
else
	for s in "$root"/tests/scenarios/*/; do scenarios+=("${s%/}"); done
fi
# A scenario whose create took longer than the daemon's burst cap (four
# --schedule-delays: 4 s) on a loaded machine may have been decided before
# its last object arrived, which is what the daemon should do then, not what
# the simulator models: when such a scenario disagrees, it is run once more
# (kube-batchd only: kube-scheduler places each pod as it comes).
burst_cap_ms=4000
declare -A retried=()
for ((si = 0; si < ${#scenarios[@]}; si++)); do
	s=${scenarios[si]}
	name=$(basename "$s")
	slowest_ms=0
	files=()
	for f in "$s"/*.yaml; do
		case ${f##*/} in expect.yaml | scheduler-conf.yaml | queue-conf.yaml) ;; *) files+=("$f") ;; esac
	done
	why=$(why_skip "$s")
	[[ -z $why ]] || { skip "$name: $why"; continue; }
	# The scenario's objects as kubectl reads them, then as both sides get
	# them (twin_compare.py --prepare: what the API requires added, the
	# creationTimestamps it would overwrite taken out; the waves' files).
	if ! cat "${files[@]}" | k create --dry-run=client -o json -f - >"$dir/$name.objs.json" 2>"$dir/$name.err"; then
		if grep -q 'no matches for kind' "$dir/$name.err"; then
			# A kind of a newer Kubernetes (KEP-4671's Workload) that this
			# control plane does not serve: tests/e2e/k8s-gang.sh covers it.
			skip "$name: the local API server does not serve $(grep -m1 -o 'kind "[^"]*" in version "[^"]*"' "$dir/$name.err")"
		else
			fail "$name: kubectl cannot read its manifests: $(head -c 300 "$dir/$name.err")"
		fi
		continue
	fi
	python3 "$here/twin_compare.py" --prepare "$dir/$name.objs.json" "$dir/$name" ||
		{ fail "$name: twin_compare.py --prepare failed"; continue; }
	sim_args=(-f "$dir/$name.api.yaml")
	[[ -s $dir/$name.ns.yaml ]] && sim_args=(-f "$dir/$name.ns.yaml" "${sim_args[@]}")
	[[ -f $s/scheduler-conf.yaml ]] && sim_args+=(--scheduler-conf "$s/scheduler-conf.yaml")
	[[ -f $s/queue-conf.yaml ]] && sim_args+=(--queue-conf "$s/queue-conf.yaml")
	if ! "$bin" simulate "${sim_args[@]}" --output json >"$dir/$name.sim.json" 2>"$dir/$name.sim.err"; then
		fail "$name: simulate failed: $(head -c 300 "$dir/$name.sim.err")"
		continue
	fi
	if [[ $counterpart == kube-scheduler ]] &&
		python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["evictions"] else 1)' "$dir/$name.sim.json"; then
		skip "$name: the simulator evicts (kube-scheduler's preemption is not kube-batchd's)"
		continue
	fi
	if [[ -s $dir/$name.ns.yaml ]] && ! k apply -f "$dir/$name.ns.yaml" >"$dir/$name.ns.log" 2>&1; then
		fail "$name: its Namespaces: $(head -c 300 "$dir/$name.ns.log")"
		continue
	fi
	for ns in $(<"$dir/$name.namespaces"); do
		k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns" >/dev/null
	done
	start_sched "$s" || { fail "$name: $counterpart starts (log $sched_log)"; stop_sched; reset_cluster; continue; }
	# The objects there from the start, created while the scheduler runs
	# (it must wait for the burst to end: policy, not arrival order,
	# between objects created together), then the pods that arrive later
	# (sim.kube-batchd.io/arrival), a wave per arrival time, each once the
	# one before has settled.
	waves=$(<"$dir/$name.waves")
	before=$(decisions | cut -d' ' -f2)
	create_wave "$dir/$name.wave-0.yaml" || { stop_sched; reset_cluster; continue; }
	k label priorityclasses --all twin.kube-batchd.io/scenario=yes --overwrite >/dev/null 2>&1
	# PodGroup statuses written in the manifests (a create drops them).
	while read -r group ns pg patch; do
		# Through the status subresource where the CRD has one; where it
		# has none, the create kept the status and this patch changes nothing.
		k patch "podgroups.$group" "$pg" -n "$ns" --subresource=status --type=merge -p "$patch" >/dev/null 2>&1 ||
			k patch "podgroups.$group" "$pg" -n "$ns" --type=merge -p "$patch" >/dev/null
	done <"$dir/$name.pg-statuses"
	settle "$before"
	created=1
	for at in $waves; do
		before=$(decisions | cut -d' ' -f2)
		create_wave "$dir/$name.wave-$at.yaml" || { created=0; break; }
		settle "$before"
	done
	((created)) || { stop_sched; reset_cluster; continue; }
	k get pods -A -o json >"$dir/$name.pods.json"
	k get nodes -o json >"$dir/$name.nodes.json"
	stop_sched
	compare=()
	[[ $counterpart == kube-scheduler ]] && compare=(--any-node)
	if out=$(python3 "$here/twin_compare.py" "${compare[@]}" "$dir/$name.sim.json" "$dir/$name.objs.json" \
		"$dir/$name.pods.json" "$dir/$name.nodes.json" 2>&1); then
		pass "$name: $out"
	elif [[ $counterpart == kube-batchd && -z ${retried[$name]:-} ]] && ((slowest_ms > burst_cap_ms)); then
		retried[$name]=1
		scenarios+=("$s")
		echo "RETRY: $name: the cluster decided otherwise, but a create took ${slowest_ms} ms, past the daemon's burst cap of ${burst_cap_ms} ms: run again at the end"
		echo "$out" | sed 's/^/    /'
	else
		fail "$name: the cluster ($counterpart) decided otherwise than the simulator"
		echo "$out" | sed 's/^/    /'
	fi
	check "$name: no node over its allocatable in the API's record" \
		e2e_invariants "$dir/$name.nodes.json" "$dir/$name.pods.json"
	reset_cluster || fail "$name: its objects were not all deleted"
done
e2e_summary
((fails == 0))

#!/usr/bin/env bash
# End-to-end tests of cluster mode against the local control plane
# (tests/cluster/up): the real kube-apiserver, the daemon with the
# scheduler's restricted credentials (DIR/scheduler.kubeconfig), kubectl.
#
#   tests/e2e/cluster-mode.sh [--build BUILDDIR] [--keep] [CASE...]
#
# Cases: mnist too-big queues gpu gpu-sharing many-names vgpu restart
# preempt leader deploy flavours tf-template pg-first coexist metrics
# (default: all). One control plane for the whole run (started
# with `up --controllers` when tf-template is among the cases: it needs the
# Deployment and Job controllers); each case brings its own Nodes and
# namespace and its own scheduler process, and cleans up after itself.
# Prints one PASS or FAIL line per check; exit 0 only if every check passed.
# Environment: KB_E2E_DIR (control-plane dir; default a fresh temp dir, shut
# down at the end unless --keep), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=cluster-mode e2e_help_end=15
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fixtures=$here/fixtures
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(mnist too-big queues gpu gpu-sharing many-names vgpu restart preempt leader deploy flavours tf-template pg-first coexist metrics)
up_flags=()
[[ " ${cases[*]} " == *" tf-template "* ]] && up_flags+=(--controllers)
e2e_need kubectl curl openssl flock setsid
[[ -x $root/tests/cluster/up ]] || { echo "cluster-mode: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-e2e
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

"$root/tests/cluster/up" "${up_flags[@]}" "$dir" >"$dir.up.log" 2>&1 || { cat "$dir.up.log" >&2; echo "FAIL: control plane did not start"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
schedcfg=$dir/scheduler.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }

e2e_free_port || { fail "a free port for kube-batchd"; exit 1; }
# Namespaces are never deleted (there is no namespace controller to finish
# the job), so each run uses its own.
run=$(printf '%04x' $((RANDOM % 65536)))
mkns() { k create namespace "$1-$run" >/dev/null && echo "$1-$run"; }
nlog=0
# start_sched [FLAGS...]: the daemon in the background, waits for /healthz.
start_sched() {
	nlog=$((nlog + 1))
	log=$dir/scheduler-$nlog.log
	"$bin" --kubeconfig "$schedcfg" --listen-address "127.0.0.1:$port" --schedule-period 200ms -v 2 \
		--scheduler-conf "${sched_conf:-$fixtures/scheduler.conf}" "$@" \
		>"$log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$log" && return 0
	echo "scheduler did not become healthy (its log's last lines above)" >&2
	return 1
}
# stop_sched [SIGNAL]: stops the daemon; with TERM it must exit 0.
stop_sched() {
	[[ -n $sched_pid ]] || return 0
	local sig=${1:-TERM} rc
	kill "-$sig" "$sched_pid" 2>/dev/null
	wait "$sched_pid" 2>/dev/null
	rc=$?
	sched_pid=
	[[ $sig != TERM ]] || ((rc == 0))
}
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# node NAME CPU [GPUS]: a Node without a kubelet (status is kept on create).
node() {
	local gpu=
	[[ -n ${3:-} ]] && gpu=", nvidia.com/gpu: \"$3\""
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1, e2e.kube-batchd.io/node: "true"}}
status:
  capacity: {cpu: "$2", memory: 32Gi, pods: "110"$gpu}
  allocatable: {cpu: "$2", memory: 32Gi, pods: "110"$gpu}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF
}
# lone_pods NS PREFIX COUNT CPU: pods without a PodGroup (jobs of one).
lone_pods() {
	local i
	for ((i = 0; i < $3; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $1}
spec:
  schedulerName: kube-batchd
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "$4"}}}]
EOF
	done
}
# gang NS NAME SIZE CPU: a PodGroup of SIZE pods, minMember SIZE.
gang() {
	local i
	cat <<EOF
---
apiVersion: scheduling.incubator.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: $2, namespace: $1}
spec: {minMember: $3}
EOF
	for ((i = 0; i < $3; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $1, annotations: {scheduling.k8s.io/group-name: $2}}
spec:
  schedulerName: kube-batchd
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "$4"}}}]
EOF
	done
}
bound_count() { k get pods -n "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . ; }
# wait_bound NS N [SECONDS]: until N pods of NS are bound.
wait_bound() {
	local i
	for ((i = 0; i < ${3:-30} * 5; i++)); do
		(($(bound_count "$1") >= $2)) && return 0
		sleep 0.2
	done
	return 1
}
reset_case() {
	stop_sched
	if k get nodes -o json >"$dir/inv-nodes.json" && k get pods -A -o json >"$dir/inv-pods.json"; then
		check "$c: no node over its allocatable in the API's record" \
			e2e_invariants "$dir/inv-nodes.json" "$dir/inv-pods.json"
	fi
	local ns
	for ns in "$@"; do
		k delete pods --all -n "$ns" --grace-period=0 --force >/dev/null 2>&1
		k delete podgroups.scheduling.incubator.k8s.io --all -n "$ns" >/dev/null 2>&1
	done
	k delete nodes -l e2e.kube-batchd.io/node=true >/dev/null 2>&1
}

# ---- cases ----------------------------------------------------------------------------

case_mnist() {
	local ns phase running
	ns=$(mkns e2e-mnist)
	node m-node-1 4; node m-node-2 4
	start_sched || { fail "mnist: scheduler starts"; return; }
	k create -n "$ns" -f "$fixtures/dist-mnist.yaml" >/dev/null
	check "mnist: all 6 members of the gang are bound" wait_bound "$ns" 6 30
	for _ in $(seq 50); do
		phase=$(k get podgroup dist-mnist -n "$ns" -o jsonpath='{.status.phase}')
		[[ $phase == Running ]] && break
		sleep 0.2
	done
	running=$(k get podgroup dist-mnist -n "$ns" -o jsonpath='{.status.running}')
	check "mnist: PodGroup status phase Running, running 6 (got $phase, $running)" test "$phase/$running" = Running/6
	check "mnist: Normal Scheduled event on the PodGroup" \
		test "$(k get events -n "$ns" --field-selector involvedObject.kind=PodGroup,reason=Scheduled -o name | grep -c .)" = 1
	check "mnist: Normal Scheduled events on the 6 pods" \
		test "$(k get events -n "$ns" --field-selector involvedObject.kind=Pod,reason=Scheduled -o name | grep -c .)" = 6
	check "mnist: Binding accepted 6 times, no failure" test "$(metric kube_batchd_binds_total)/$(metric kube_batchd_bind_failures_total)" = 6/0
	check "mnist: nothing left to send (api_requests_pending 0)" test "$(metric kube_batchd_api_requests_pending)" = 0
	check "mnist: SIGTERM stops the daemon with status 0" stop_sched
	# A restarted daemon finds the status it wrote and writes it not again.
	start_sched || { fail "mnist: scheduler restarts"; return; }
	# Its first session is the one that would write (later ones run only
	# when the cluster changes); wait for it and for its requests' answers.
	local sessions pending
	for _ in $(seq 50); do
		sessions=$(metric kube_batchd_sessions_total) pending=$(metric kube_batchd_api_requests_pending)
		((${sessions:-0} >= 1 && ${pending:-1} == 0)) && break
		sleep 0.1
	done
	check "mnist: the restarted daemon ran a session, nothing left to send (sessions $(metric kube_batchd_sessions_total), pending $(metric kube_batchd_api_requests_pending))" \
		test "$(metric kube_batchd_sessions_total)" -ge 1 -a "$(metric kube_batchd_api_requests_pending)" = 0
	check "mnist: after a restart, no status write for the Running gang (got $(metric kube_batchd_status_writes_total))" \
		test "$(metric kube_batchd_status_writes_total)" = 0
	check "mnist: the restarted daemon stops with status 0" stop_sched
	reset_case "$ns"
}

case_too_big() {
	local ns cond reason msg i
	ns=$(mkns e2e-big)
	node b-node-1 4; node b-node-2 4
	gang "$ns" huge 10 1 | k create -f - >/dev/null
	start_sched || { fail "too-big: scheduler starts"; return; }
	for ((i = 0; i < 50; i++)); do
		cond=$(k get podgroup huge -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].status}')
		[[ $cond == True ]] && break
		sleep 0.2
	done
	sleep 1 # a few more sessions
	check "too-big: no member of the 10-pod gang on the 8-cpu cluster is bound" test "$(bound_count "$ns")" = 0
	reason=$(k get podgroup huge -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].reason}')
	msg=$(k get podgroup huge -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}')
	echo "  podgroup $ns/huge: Unschedulable=$cond reason=$reason message=\"$msg\""
	check "too-big: PodGroup condition Unschedulable=True with a reason and a message" \
		test -n "$reason" -a -n "$msg" -a "$cond" = True
	check "too-big: PodGroup phase is not Running" \
		test "$(k get podgroup huge -n "$ns" -o jsonpath='{.status.phase}')" != Running
	check "too-big: one Warning Unschedulable event on the PodGroup" \
		test "$(k get events -n "$ns" --field-selector involvedObject.kind=PodGroup,reason=Unschedulable -o name | grep -c .)" = 1
	check "too-big: one FailedScheduling event per pod" \
		test "$(k get events -n "$ns" --field-selector involvedObject.kind=Pod,reason=FailedScheduling -o name | grep -c .)" = 10
	check "too-big: pods say PodScheduled=False reason Unschedulable" \
		test "$(k get pod huge-0 -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}/{.status.conditions[?(@.type=="PodScheduled")].reason}')" = False/Unschedulable
	# Status and events are written when they change, not every session.
	local w1 w2 e1 e2
	w1=$(metric kube_batchd_status_writes_total); e1=$(metric kube_batchd_events_total)
	sleep 2
	w2=$(metric kube_batchd_status_writes_total); e2=$(metric kube_batchd_events_total)
	check "too-big: nothing rewritten while nothing changes ($w1 status writes, $e1 events; then $w2, $e2)" test "$w1/$e1" = "$w2/$e2"
	reset_case "$ns"
}

case_queues() {
	local light heavy a b
	light=$(mkns e2e-light); heavy=$(mkns e2e-heavy)
	printf '%s\n' "# Two tenants with weights 1 and 3, mapped by namespace." "queues:" \
		"- name: light" "  weight: 1" "  namespaces: [$light]" \
		"- name: heavy" "  weight: 3" "  namespaces: [$heavy]" >"$dir/queues-1-3.yaml"
	node q-node-1 4; node q-node-2 4
	# Both queues ask for the whole cluster before the scheduler looks.
	{ lone_pods "$light" a 8 1; lone_pods "$heavy" b 8 1; } | k create -f - >/dev/null
	start_sched --queue-conf "$dir/queues-1-3.yaml" || { fail "queues: scheduler starts"; return; }
	wait_bound "$heavy" 6 30
	sleep 1
	a=$(bound_count "$light"); b=$(bound_count "$heavy")
	check "queues: weights 1 and 3 share 8 cpu as 2 and 6 (got $a and $b)" test "$a/$b" = 2/6
	# The file is re-read when it changes; a bad one keeps the queues in force.
	printf '%s\n' "queues:" "- name: light" "  weight: 0" >"$dir/queues-1-3.yaml"
	sleep 1
	check "queues: a bad queue file is refused and the queues in force stay" \
		grep -q "keeping the queues in force: .*weight" "$log"
	printf '%s\n' "queues:" "- name: light" "  weight: 2" "  namespaces: [$light]" \
		"- name: heavy" "  weight: 2" "  namespaces: [$heavy]" >"$dir/queues-1-3.yaml"
	sleep 1
	check "queues: a good queue file is reloaded" grep -q 'queue configuration .* reloaded: 2 queues' "$log"
	reset_case "$light" "$heavy"
}

case_gpu() {
	local ns nodes devs
	ns=$(mkns e2e-gpu)
	node g-node-1 8 2; node g-node-2 8 2; node g-node-3 8 2
	start_sched || { fail "gpu: scheduler starts"; return; }
	k create -n "$ns" -f "$fixtures/horovod.yaml" >/dev/null
	check "gpu: the 3 horovod workers are bound" wait_bound "$ns" 3 30
	nodes=$(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)
	check "gpu: one worker per 2-GPU node ($nodes distinct nodes)" test "$nodes" = 3
	devs=$(k get pods -n "$ns" -o go-template='{{range .items}}{{index .metadata.annotations "kube-batchd.io/gpu-devices"}}{{"\n"}}{{end}}' | sort -u | tr '\n' ' ')
	check "gpu: each worker's annotation kube-batchd.io/gpu-devices is \"0,1\" (got: $devs)" test "$devs" = "0,1 "
	reset_case "$ns"
}

# The GPU sharing modes as real nodes advertise them (issue 17): a node
# time-sliced by NVIDIA's device plugin (GFD labels, 2 GPUs x 4 replicas),
# a node of Alibaba's gpushare (4 GPUs of 16 GiB, Arena's gpushare label)
# already holding another scheduler's pod on GPU 1, and a 2-GPU node given
# kube-batchd.io/gpu-milli shares that ask nvidia.com/gpu: 1, and a node of
# mixed MIG profiles (each an extended resource). Checked from
# the API's record by gpu_check.py: allocatable never exceeded, gpushare
# annotations as its device plugin reads them, Arena's view.
gpu_node() { # NAME LABELS(json) CAPACITY(json)
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: $2}
status:
  capacity: $3
  allocatable: $3
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF
}
gpu_pod() { # NS NAME NODE LIMITS(json) [ANNOTATIONS(json)]
	local ann='{}'
	[[ -n ${5:-} ]] && ann=$5
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, annotations: $ann}
spec:
  schedulerName: kube-batchd
  nodeSelector: {kubernetes.io/hostname: $3}
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 100m}, limits: $4}}]
EOF
}
case_gpu_sharing() {
	local ns i idx n
	ns=$(mkns e2e-share)
	gpu_node s-ts '{kubernetes.io/hostname: s-ts, e2e.kube-batchd.io/node: "true", nvidia.com/gpu.product: Tesla-T4-SHARED, nvidia.com/gpu.count: "2", nvidia.com/gpu.replicas: "4", nvidia.com/gpu.sharing-strategy: time-slicing}' \
		'{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}'
	gpu_node s-gs '{kubernetes.io/hostname: s-gs, e2e.kube-batchd.io/node: "true", gpushare: "true"}' \
		'{cpu: "16", memory: 64Gi, pods: "110", aliyun.com/gpu-mem: "64", aliyun.com/gpu-count: "4"}'
	gpu_node s-ex '{kubernetes.io/hostname: s-ex, e2e.kube-batchd.io/node: "true"}' \
		'{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "2"}'
	gpu_node s-mig '{kubernetes.io/hostname: s-mig, e2e.kube-batchd.io/node: "true", nvidia.com/mig.strategy: mixed}' \
		'{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/mig-1g.10gb: "2", nvidia.com/mig-3g.40gb: "1"}'
	# Another scheduler's gpushare pod, bound to GPU 1 of s-gs (8 GiB).
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: extender-placed, namespace: $ns, annotations: {ALIYUN_COM_GPU_MEM_IDX: "1", ALIYUN_COM_GPU_MEM_POD: "8", ALIYUN_COM_GPU_MEM_DEV: "16", ALIYUN_COM_GPU_MEM_ASSIGNED: "false", ALIYUN_COM_GPU_MEM_ASSUME_TIME: "$(date +%s%N)"}}
spec:
  nodeName: s-gs
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {limits: {aliyun.com/gpu-mem: "8"}}}]
EOF
	start_sched || { fail "gpu-sharing: scheduler starts"; return; }
	{
		for ((i = 0; i < 9; i++)); do gpu_pod "$ns" "ts-$i" s-ts '{nvidia.com/gpu: "1"}'; done
		# a 8 -> GPU 1 (8 free there: the tightest), b 10 -> GPU 0,
		# c 20 fits no GPU (32 GiB free in all at the end), d 6 -> GPU 0.
		gpu_pod "$ns" gs-a s-gs '{aliyun.com/gpu-mem: "8"}'
		gpu_pod "$ns" gs-b s-gs '{aliyun.com/gpu-mem: "10"}'
		gpu_pod "$ns" gs-c s-gs '{aliyun.com/gpu-mem: "20"}'
		gpu_pod "$ns" gs-d s-gs '{aliyun.com/gpu-mem: "6"}'
		for ((i = 0; i < 3; i++)); do
			gpu_pod "$ns" "milli-$i" s-ex '{nvidia.com/gpu: "1"}' '{kube-batchd.io/gpu-milli: "300"}'
			gpu_pod "$ns" "mig-$i" s-mig '{nvidia.com/mig-1g.10gb: "1"}'
		done
	} | k create -f - >/dev/null
	# The foreign pod + 8 replicas + 3 gpushare + 2 shares counted whole
	# + 2 MIG slices.
	check "gpu-sharing: 15 of the 19 kube-batchd pods bound (time-sliced, gpushare, shares, MIG)" wait_bound "$ns" 16 30
	sleep 2 # more sessions: nothing more may be bound
	n=$(bound_count "$ns")
	check "gpu-sharing: still 16 pods bound after more sessions (got $n)" test "$n" = 16
	k get nodes -o json >"$dir/gpu-nodes.json"
	k get pods -A -o json >"$dir/gpu-pods.json"
	check "gpu-sharing: allocatable never exceeded, gpushare annotations as its device plugin reads them, Arena's view consistent" \
		python3 "$here/gpu_check.py" "$dir/gpu-nodes.json" "$dir/gpu-pods.json"
	idx=$(k get pods -n "$ns" gs-a gs-b gs-d -o go-template='{{range .items}}{{.metadata.name}}={{index .metadata.annotations "ALIYUN_COM_GPU_MEM_IDX"}} {{end}}')
	check "gpu-sharing: devices chosen as the extender would, around the foreign pod on GPU 1 (got $idx)" \
		test "$idx" = "gs-a=1 gs-b=0 gs-d=0 "
	check "gpu-sharing: gs-c waits for one GPU with 20 GiB free" \
		grep -q 'no single GPU with enough free aliyun.com/gpu-mem' <<<"$(k get pod gs-c -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
	check "gpu-sharing: a third share on the 2-GPU node waits for nvidia.com/gpu" \
		test "$(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep -c '^milli-.=s-ex$')" = 2
	reset_case "$ns"
}

# More resource names asked for than the resource vector has slots (16,
# cpu, memory and pods included; api/resource.h, "Past the slots"): a node
# of 20 MIG profiles of four GPU models, one of each, and two pods asking
# each profile. Whichever names the daemon meets last are past the slots;
# every profile is bound once, never twice, and the second pod of each
# says which name it lacks.
mig_profiles=(1g.5gb 1g.10gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb 1g.20gb 2g.20gb 3g.40gb 4g.40gb
	7g.80gb 1g.6gb 2g.12gb 4g.24gb 1g.12gb 1g.24gb 2g.24gb 3g.47gb 4g.47gb 7g.94gb)
case_many_names() {
	local ns p alloc waiting
	ns=$(mkns e2e-names)
	alloc='cpu: "64", memory: 256Gi, pods: "110"'
	for p in "${mig_profiles[@]}"; do alloc+=", nvidia.com/mig-$p: \"1\""; done
	gpu_node n-mig '{kubernetes.io/hostname: n-mig, e2e.kube-batchd.io/node: "true", nvidia.com/mig.strategy: mixed}' "{$alloc}"
	start_sched || { fail "many-names: scheduler starts"; return; }
	for p in "${mig_profiles[@]}"; do
		gpu_pod "$ns" "mig-${p//./-}-a" n-mig "{nvidia.com/mig-$p: \"1\"}"
		gpu_pod "$ns" "mig-${p//./-}-b" n-mig "{nvidia.com/mig-$p: \"1\"}"
	done | k create -f - >/dev/null
	check "many-names: 20 of the 40 pods bound, one per MIG profile (23 names asked for)" \
		wait_bound "$ns" 20 30
	sleep 2 # more sessions: nothing more may be bound
	check "many-names: still 20 bound after more sessions (got $(bound_count "$ns"))" \
		test "$(bound_count "$ns")" = 20
	k get nodes -o json >"$dir/names-nodes.json"
	k get pods -A -o json >"$dir/names-pods.json"
	check "many-names: no MIG profile of n-mig asked for beyond its allocatable (gpu_check.py)" \
		python3 "$here/gpu_check.py" "$dir/names-nodes.json" "$dir/names-pods.json"
	waiting=$(k get pods -n "$ns" -o go-template='{{range .items}}{{if not .spec.nodeName}}{{range .status.conditions}}{{if eq .type "PodScheduled"}}{{.message}}{{"\n"}}{{end}}{{end}}{{end}}{{end}}' |
		grep -o 'Insufficient nvidia.com/mig-[0-9a-z.]*' | sort -u | grep -c .)
	check "many-names: each of the 20 waiting pods says which profile it lacks (distinct: $waiting)" \
		test "$waiting" = 20
	reset_case "$ns"
}

# volcano's vGPU (HAMi's volcano-vgpu-device-plugin; plugins/vgpu.h): a
# node registering two T4s of 15360 MiB, 4 vGPUs each, as its device plugin
# does (annotations and allocatable). Pods are placed as volcano's
# scheduler places them, with the annotations its device plugin reads;
# vgpu_check.py checks them, and the GPUs' books, as the plugin and
# volcano read them. After a restart the daemon's books come from those
# annotations alone.
vgpu_pod() { # NS NAME LIMITS(json)
	gpu_pod "$1" "$2" n-vgpu "$3"
}
vgpu_ids() { k get pod "$2" -n "$1" -o go-template='{{index .metadata.annotations "volcano.sh/vgpu-ids-new"}}'; }
case_vgpu() {
	local ns why res
	ns=$(mkns e2e-vgpu)
	res='{cpu: "32", memory: 128Gi, pods: "110", volcano.sh/vgpu-number: "8", volcano.sh/vgpu-memory: "30720", volcano.sh/vgpu-cores: "200"}'
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: n-vgpu
  labels: {kubernetes.io/hostname: n-vgpu, e2e.kube-batchd.io/node: "true"}
  annotations:
    volcano.sh/node-vgpu-register: "GPU-aaaa-0000,4,15360,NVIDIA-Tesla T4,true,hami-core:GPU-bbbb-1111,4,15360,NVIDIA-Tesla T4,true,hami-core:"
    volcano.sh/node-vgpu-handshake: "Reported $(date -u '+%Y-%m-%d %H:%M:%S') +0000 UTC"
status:
  capacity: $res
  allocatable: $res
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF
	start_sched || { fail "vgpu: scheduler starts"; return; }
	# One at a time, so the GPUs they get are known: a takes GPU bbbb (the
	# highest index first), b finds 7360 MiB left there and takes aaaa, c
	# takes 4000 MiB of both; d (8000 MiB) then fits no GPU.
	vgpu_pod "$ns" a '{volcano.sh/vgpu-number: "1", volcano.sh/vgpu-memory: "8000", volcano.sh/vgpu-cores: "50"}' | k create -f - >/dev/null
	wait_bound "$ns" 1 30
	vgpu_pod "$ns" b '{volcano.sh/vgpu-number: "1", volcano.sh/vgpu-memory: "8000", volcano.sh/vgpu-cores: "50"}' | k create -f - >/dev/null
	wait_bound "$ns" 2 30
	{
		vgpu_pod "$ns" c '{volcano.sh/vgpu-number: "2", volcano.sh/vgpu-memory: "4000"}'
		vgpu_pod "$ns" d '{volcano.sh/vgpu-number: "1", volcano.sh/vgpu-memory: "8000"}'
	} | k create -f - >/dev/null
	check "vgpu: a, b and c bound" wait_bound "$ns" 3 30
	sleep 2 # more sessions: nothing more may be bound
	check "vgpu: d (8000 MiB) still waits (bound: $(bound_count "$ns"))" test "$(bound_count "$ns")" = 3
	check "vgpu: a was given GPU bbbb, as volcano's scheduler would (got $(vgpu_ids "$ns" a))" \
		test "$(vgpu_ids "$ns" a)" = "GPU-bbbb-1111,NVIDIA,8000,50:"
	check "vgpu: b was given GPU aaaa (got $(vgpu_ids "$ns" b))" \
		test "$(vgpu_ids "$ns" b)" = "GPU-aaaa-0000,NVIDIA,8000,50:"
	check "vgpu: c was given both (got $(vgpu_ids "$ns" c))" \
		test "$(vgpu_ids "$ns" c)" = "GPU-bbbb-1111,NVIDIA,4000,0:GPU-aaaa-0000,NVIDIA,4000,0:"
	why=$(k get pod d -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
	check "vgpu: d says why it waits (got: $why)" grep -q 'too few GPUs with a free vGPU' <<<"$why"
	k get nodes -o json >"$dir/vgpu-nodes.json"
	k get pods -A -o json >"$dir/vgpu-pods.json"
	check "vgpu: annotations as the device plugin reads them, no GPU over its vGPUs, memory or cores (vgpu_check.py)" \
		python3 "$here/vgpu_check.py" "$dir/vgpu-nodes.json" "$dir/vgpu-pods.json"
	# A restart: the books come back from the annotations. 3360 MiB is left
	# on each GPU: e (3000) fits, on bbbb; f (4000) does not.
	stop_sched
	start_sched || { fail "vgpu: scheduler restarts"; return; }
	{
		vgpu_pod "$ns" e '{volcano.sh/vgpu-number: "1", volcano.sh/vgpu-memory: "3000"}'
		vgpu_pod "$ns" f '{volcano.sh/vgpu-number: "1", volcano.sh/vgpu-memory: "4000"}'
	} | k create -f - >/dev/null
	check "vgpu: after a restart, e bound" wait_bound "$ns" 4 30
	sleep 2
	check "vgpu: after a restart, e on GPU bbbb and f (4000 MiB) waits (got $(vgpu_ids "$ns" e), bound $(bound_count "$ns"))" \
		test "$(vgpu_ids "$ns" e)/$(bound_count "$ns")" = "GPU-bbbb-1111,NVIDIA,3000,0:/4"
	k get pods -A -o json >"$dir/vgpu-pods.json"
	check "vgpu: after the restart, still as the device plugin reads them (vgpu_check.py)" \
		python3 "$here/vgpu_check.py" "$dir/vgpu-nodes.json" "$dir/vgpu-pods.json"
	reset_case "$ns"
}

# pods_nodes NS: "name=node" lines, sorted.
pods_nodes() { k get pods -n "$1" -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | sort; }

case_restart() {
	local ns before after g partial=0 n total used i
	ns=$(mkns e2e-restart)
	node r-node-1 4; node r-node-2 4; node r-node-3 4; node r-node-4 4
	start_sched || { fail "restart: scheduler starts"; return; }
	{ gang "$ns" g1 3 1; gang "$ns" g2 3 1; gang "$ns" g3 3 1; } | k create -f - >/dev/null
	wait_bound "$ns" 9 30
	before=$(pods_nodes "$ns" | grep '=.')
	# More work arrives, and the scheduler is killed while it places it...
	{ gang "$ns" g4 3 1; gang "$ns" g5 2 1; } | k create -f - >/dev/null &
	local creating=$!
	for ((i = 0; i < 100; i++)); do
		(($(bound_count "$ns") > 9)) && break
		sleep 0.05
	done
	stop_sched KILL
	wait "$creating" # not a bare wait: the invariant watch runs in the background too
	# ...and more arrives while it is down.
	gang "$ns" g6 2 1 | k create -f - >/dev/null
	echo "  killed with $(bound_count "$ns") of 16 pods bound"
	start_sched || { fail "restart: scheduler restarts"; return; }
	check "restart: all 16 pods bound after the restart" wait_bound "$ns" 16 30
	sleep 1
	after=$(pods_nodes "$ns")
	check "restart: pods bound before the kill kept their nodes" \
		test -z "$(comm -23 <(echo "$before") <(echo "$after"))"
	check "restart: no Binding refused after the restart (none bound twice)" test "$(metric kube_batchd_bind_failures_total)" = 0
	for g in g1 g2 g3 g4 g5 g6; do
		total=$(echo "$after" | grep -c "^$g-")
		n=$(echo "$after" | grep "^$g-" | grep -c '=.')
		((n == 0 || n == total)) || partial=1
	done
	check "restart: no gang partly bound" test $partial = 0
	used=$(echo "$after" | cut -d= -f2 | grep . | sort | uniq -c | awk '$1 > 4' | grep -c .)
	check "restart: no node holds more than its 4 cpu" test "$used" = 0
	reset_case "$ns"
}

case_leader() {
	local ns pa pb porta=$port portb=$((port + 1)) la lb i lead_pid follow_pid follow_port
	ns=$(mkns e2e-leader)
	node l-node-1 4
	start_sched --leader-elect || { fail "leader: first scheduler starts"; return; }
	pa=$sched_pid
	port=$portb
	start_sched --leader-elect || { fail "leader: second scheduler starts"; kill -KILL "$pa"; port=$porta; return; }
	pb=$sched_pid
	leader_of() { curl -s "http://127.0.0.1:$1/metrics" | awk '$1 == "kube_batchd_leader" {print $2}'; }
	for ((i = 0; i < 100; i++)); do
		la=$(leader_of "$porta"); lb=$(leader_of "$portb")
		[[ $la$lb == 10 || $la$lb == 01 ]] && break
		sleep 0.2
	done
	check "leader: exactly one of two schedulers leads (got $la and $lb)" test $((la + lb)) = 1
	if [[ $la == 1 ]]; then lead_pid=$pa follow_pid=$pb follow_port=$portb; else lead_pid=$pb follow_pid=$pa follow_port=$porta; fi
	gang "$ns" a 2 1 | k create -f - >/dev/null
	check "leader: the leader binds" wait_bound "$ns" 2 20
	port=$follow_port
	check "leader: the follower runs no session" test "$(metric kube_batchd_sessions_total)" = 0
	kill -KILL "$lead_pid"; wait "$lead_pid" 2>/dev/null
	gang "$ns" b 2 1 | k create -f - >/dev/null
	check "leader: after the leader dies, the other takes the lease (15 s) and binds" wait_bound "$ns" 4 40
	sched_pid=$follow_pid
	check "leader: SIGTERM releases the lease and exits 0" stop_sched
	check "leader: the released lease has no holder" \
		test -z "$(k get lease kube-batchd -n kube-system -o jsonpath='{.spec.holderIdentity}')"
	port=$porta
	reset_case "$ns"
}

# Without kubelets a bound pod stays Pending: the test marks the victims
# Running through the status subresource, as a kubelet would.
case_preempt() {
	local ns del grace
	ns=$(mkns e2e-preempt)
	node p-node-1 2
	k apply -f - >/dev/null <<EOF
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
EOF
	lone_pods "$ns" low 2 1 | sed 's/^spec:$/spec:\n  terminationGracePeriodSeconds: 7/' | k create -f - >/dev/null
	start_sched || { fail "preempt: scheduler starts"; return; }
	wait_bound "$ns" 2 20
	for p in low-0 low-1; do
		k patch pod "$p" -n "$ns" --subresource=status --type=merge \
			-p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
	done
	lone_pods "$ns" high 1 1 | sed 's/^spec:$/spec:\n  priorityClassName: e2e-high/' | k create -f - >/dev/null
	for ((i = 0; i < 100; i++)); do
		del=$(k get pods -n "$ns" -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}={.metadata.deletionGracePeriodSeconds}{"\n"}{end}')
		[[ -n $del ]] && break
		sleep 0.2
	done
	check "preempt: one low-priority pod is evicted, with its own grace period of 7 s (got: ${del:-none})" \
		bash -c "[[ '$del' =~ ^low-[01]=7$ ]]"
	check "preempt: Normal Preempted event names the preemptor" \
		bash -c "kubectl --kubeconfig '$admin' get events -n '$ns' --field-selector reason=Preempted -o jsonpath='{.items[*].message}' | grep -q 'high-0'"
	check "preempt: the preemptor waits while the victim terminates" \
		test -z "$(k get pod high-0 -n "$ns" -o jsonpath='{.spec.nodeName}')"
	k delete pod "${del%%=*}" -n "$ns" --grace-period=0 --force >/dev/null 2>&1
	check "preempt: the preemptor is bound once the victim is gone" \
		bash -c "for i in \$(seq 100); do [[ -n \$(kubectl --kubeconfig '$admin' get pod high-0 -n '$ns' -o jsonpath='{.spec.nodeName}') ]] && exit 0; sleep 0.2; done; exit 1"
	check "preempt: the eviction was counted" test "$(metric kube_batchd_evictions_total)" = 1
	reset_case "$ns"
}

case_deploy() {
	local out
	out=$(k apply --dry-run=server -k "$root/deploy" 2>&1)
	echo "$out" | sed 's/^/  /'
	check "deploy: kubectl apply --dry-run=server -k deploy/ is accepted" \
		bash -c "kubectl --kubeconfig '$admin' apply --dry-run=server -k '$root/deploy' >/dev/null 2>&1"
}

# Each of the three PodGroup APIs, in one namespace: a kube-batch PodGroup
# (pods annotated scheduling.k8s.io/group-name), a volcano one (annotation
# scheduling.volcano.sh/group-name) and a coscheduling one (pods LABELLED
# scheduling.x-k8s.io/pod-group).
case_flavours() {
	local ns i st want spec g
	ns=$(mkns e2e-flavours)
	node f-node-1 4; node f-node-2 4
	{
		for spec in "scheduling.incubator.k8s.io/v1alpha1 kb annotations scheduling.k8s.io/group-name" \
			"scheduling.volcano.sh/v1beta1 vc annotations scheduling.volcano.sh/group-name" \
			"scheduling.x-k8s.io/v1alpha1 xk labels scheduling.x-k8s.io/pod-group"; do
			set -- $spec
			printf -- '---\napiVersion: %s\nkind: PodGroup\nmetadata: {name: %s, namespace: %s}\nspec: {minMember: 2}\n' "$1" "$2" "$ns"
			for i in 0 1; do
				cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $ns, $3: {$4: $2}}
spec:
  schedulerName: kube-batchd
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]
EOF
			done
		done
	} | k create -f - >/dev/null
	start_sched || { fail "flavours: scheduler starts"; return; }
	check "flavours: all 6 pods of the three PodGroups are bound" wait_bound "$ns" 6 30
	for g in kb vc xk; do
		check "flavours: both pods of PodGroup $g are bound" \
			test "$(pods_nodes "$ns" | grep "^$g-" | grep -c '=.')" = 2
	done
	# kube-batch and volcano say Running once minMember are placed; the
	# coscheduling API says Scheduled until minMember pods really run
	# (kube/writers.c) — and with no kubelet they never do.
	for want in "podgroups.scheduling.incubator.k8s.io kb Running" "podgroups.scheduling.volcano.sh vc Running" \
		"podgroups.scheduling.x-k8s.io xk Scheduled"; do
		set -- $want
		for ((i = 0; i < 50; i++)); do
			st=$(k get "$1" "$2" -n "$ns" -o jsonpath='{.status.phase}/{.status.running}')
			[[ $st == "$3/2" ]] && break
			sleep 0.2
		done
		check "flavours: ${1#podgroups.} PodGroup $2 status is phase $3, running 2 (got $st)" test "$st" = "$3/2"
	done
	check "flavours: Normal Scheduled event on each PodGroup" \
		test "$(k get events -n "$ns" --field-selector involvedObject.kind=PodGroup,reason=Scheduled -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' | sort -u | tr '\n' ' ')" = "kb vc xk "
	check "flavours: Binding accepted 6 times, no failure" test "$(metric kube_batchd_binds_total)/$(metric kube_batchd_bind_failures_total)" = 6/0
	k delete podgroups.scheduling.volcano.sh,podgroups.scheduling.x-k8s.io --all -n "$ns" >/dev/null 2>&1
	reset_case "$ns"
}

# render_tf SECTION NAME=VALUE...: one section of fixtures/tf-job.yaml.tmpl
# with its @NAME@ placeholders replaced — the sed render step of the
# TensorFlow-on-Kubernetes articles.
render_tf() {
	local part=$1 kv args=()
	shift
	for kv; do args+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
	awk -v want="#@$part" '/^#@/ {on = ($0 == want); next} on' "$fixtures/tf-job.yaml.tmpl" | sed "${args[@]}"
}

# A TensorFlow job made by controllers (needs `up --controllers`): 2
# parameter servers from a Deployment, 4 workers from 2 Jobs of parallelism
# 2, one kube-batch PodGroup tf-job of minMember 6. The gang is bound only
# once the sixth pod exists. Next to it, the same job with minMember 7 in
# another namespace: never bound.
case_tf_template() {
	local ns ns7 n i owners
	if [[ $(grep -s '^KB_CONTROLLERS=' "$dir/cluster.env" | cut -d= -f2) != *job* ]]; then
		fail "tf-template: the control plane runs no Deployment/Job controllers (up --controllers)"
		return
	fi
	ns=$(mkns e2e-tf); ns7=$(mkns e2e-tf7)
	node t-node-1 8; node t-node-2 8
	render_tf podgroup NAME=tf-job MIN_MEMBER=6 | k create -n "$ns" -f - >/dev/null
	render_tf podgroup NAME=tf-job MIN_MEMBER=7 | k create -n "$ns7" -f - >/dev/null
	start_sched || { fail "tf-template: scheduler starts"; return; }
	for n in "$ns" "$ns7"; do
		render_tf ps NAME=tf-job PS_REPLICAS=2 CPU=1 | k create -n "$n" -f - >/dev/null
	done
	for ((i = 0; i < 100; i++)); do
		(($(k get pods -n "$ns" -o name | grep -c .) >= 2)) && break
		sleep 0.2
	done
	check "tf-template: the Deployment controller made the 2 parameter-server pods" \
		test "$(k get pods -n "$ns" -l tf-role=ps -o name | grep -c .)" = 2
	sleep 3 # ~15 scheduling sessions
	check "tf-template: with 2 of 6 pods in existence, none is bound" test "$(bound_count "$ns")" = 0
	for n in "$ns" "$ns7"; do
		for i in 0 1; do
			render_tf worker NAME=tf-job INDEX=$i PARALLELISM=2 CPU=1
			echo ---
		done | k create -n "$n" -f - >/dev/null
	done
	check "tf-template: once the Jobs made their 4 workers, all 6 pods are bound" wait_bound "$ns" 6 30
	check "tf-template: the gang is the 2 ps + 4 worker pods, each with a nodeName" \
		test "$(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.labels.tf-role}={.spec.nodeName}{"\n"}{end}' | grep -c '^\(ps\|worker\)=t-node-[12]$')" = 6
	owners=$(k get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}{"\n"}{end}' | sort | uniq -c | awk '{printf "%s %s ", $1, $2}')
	check "tf-template: the pods were made by the controllers (4 Job, 2 ReplicaSet; got $owners)" test "$owners" = "4 Job 2 ReplicaSet "
	for ((i = 0; i < 50; i++)); do
		[[ $(k get podgroup tf-job -n "$ns" -o jsonpath='{.status.phase}') == Running ]] && break
		sleep 0.2
	done
	check "tf-template: PodGroup tf-job is Running with 6 running" \
		test "$(k get podgroup tf-job -n "$ns" -o jsonpath='{.status.phase}/{.status.running}')" = Running/6
	# The minMember-7 twin has all 6 pods too, and room on the nodes.
	for ((i = 0; i < 100; i++)); do
		(($(k get pods -n "$ns7" -o name | grep -c .) >= 6)) && break
		sleep 0.2
	done
	sleep 1
	check "tf-template: minMember 7 with 6 pods: none of the 6 is bound ($(k get pods -n "$ns7" -o name | grep -c .) pods)" \
		test "$(k get pods -n "$ns7" -o name | grep -c .)/$(bound_count "$ns7")" = 6/0
	stop_sched
	# No garbage collector: remove the controllers' objects before the pods.
	for n in "$ns" "$ns7"; do
		k delete deployments,replicasets,jobs --all -n "$n" --wait=false >/dev/null 2>&1
	done
	reset_case "$ns" "$ns7"
}

# A PodGroup created before its pods, as Kubeflow's training-operator (in
# volcano mode) and volcano's job controller do: the volcano PodGroup comes
# alone, the test creates its pods only once it reads Inqueue, and the gang
# is then bound whole. Once with the full configuration (enqueue admits
# it) and once with "allocate, backfill", the built-in default's actions
# (allocate admits it), so that no configuration leaves an operator waiting.
# vc_phase_becomes NS NAME PHASE TRIES: polls the volcano PodGroup's phase
# every 0.2 s until it is PHASE or TRIES run out; prints the last one read.
vc_phase_becomes() {
	local i phase=
	for ((i = 0; i < $4; i++)); do
		phase=$(k get podgroups.scheduling.volcano.sh "$2" -n "$1" -o jsonpath='{.status.phase}')
		[[ $phase == "$3" ]] && break
		sleep 0.2
	done
	echo "$phase"
}
case_pg_first() {
	local ns conf label i phase
	node pf-node-1 4; node pf-node-2 4
	for conf in full allocate-only; do
		ns=$(mkns "e2e-pg-first-$conf")
		label="pg-first ($conf configuration)"
		sched_conf=$fixtures/scheduler.conf
		if [[ $conf != full ]]; then
			sched_conf=$dir/allocate-only.conf
			sed 's/^actions: .*/actions: "allocate, backfill"/' "$fixtures/scheduler.conf" >"$sched_conf"
		fi
		start_sched || { fail "$label: scheduler starts"; sched_conf=; continue; }
		printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: train, namespace: %s}\nspec: {minMember: 3, minResources: {cpu: "3"}}\n' "$ns" |
			k create -f - >/dev/null
		phase=$(vc_phase_becomes "$ns" train Inqueue 100)
		check "$label: the PodGroup is Inqueue with no pod (got \"$phase\")" test "$phase" = Inqueue
		for i in 0 1 2; do
			printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: train-%s, namespace: %s, annotations: {scheduling.volcano.sh/group-name: train}}\nspec:\n  schedulerName: kube-batchd\n  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1", memory: 1Gi}}}]\n' "$i" "$ns"
		done | k create -f - >/dev/null
		check "$label: the 3 pods created after Inqueue are bound" wait_bound "$ns" 3 30
		phase=$(vc_phase_becomes "$ns" train Running 50)
		check "$label: the PodGroup is Running (got \"$phase\")" test "$phase" = Running
		stop_sched
		k delete pods --all -n "$ns" --grace-period=0 --force >/dev/null 2>&1
		k delete podgroups.scheduling.volcano.sh --all -n "$ns" >/dev/null 2>&1
	done
	sched_conf=
	reset_case
}

# Only our own work, beside other schedulers: a volcano group whose pods
# name "volcano" is neither bound nor written; pods naming a second
# --scheduler-name are ours; a gated member holds its gang until the gate
# is removed; a job whose queue (the annotation the training-operator
# writes) does not exist waits, and its pods say why.
case_coexist() {
	local ns i phase msg
	ns=$(mkns e2e-coexist)
	node cx-node-1 8
	start_sched --scheduler-name kube-batchd --scheduler-name batch-2 ||
		{ fail "coexist: scheduler starts"; reset_case "$ns"; return; }
	{
		for i in 0 1; do
			printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: theirs-%s, namespace: %s, annotations: {scheduling.k8s.io/group-name: theirs}}\nspec:\n  schedulerName: volcano\n  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]\n' "$i" "$ns"
		done
		printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: theirs, namespace: %s}\nspec: {minMember: 2}\nstatus: {phase: Pending}\n' "$ns"
		gang "$ns" second 2 1 | sed 's/schedulerName: kube-batchd/schedulerName: batch-2/'
		gang "$ns" gated 2 1 | sed '/name: gated-1,/,/containers:/ s/^  schedulerName: kube-batchd$/  schedulerName: kube-batchd\n  schedulingGates: [{name: e2e.kube-batchd.io\/data}]/'
		printf -- '---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: typo, namespace: %s, annotations: {scheduling.volcano.sh/queue-name: no-such-queue}}\nspec: {minMember: 1}\n' "$ns"
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: typo-0, namespace: %s, labels: {scheduling.x-k8s.io/pod-group: typo}}\nspec:\n  schedulerName: kube-batchd\n  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]\n' "$ns"
	} | k create -f - >/dev/null
	check "coexist: the pods naming the second scheduler name are bound" wait_bound "$ns" 2 30
	sleep 2 # a few more sessions: nothing else may be bound
	check "coexist: volcano's, the gated gang's and the typo job's pods stay unbound" \
		test "$(bound_count "$ns")" = 2
	phase=$(k get podgroups.scheduling.volcano.sh theirs -n "$ns" -o jsonpath='{.status.phase}')
	check "coexist: volcano's PodGroup status is not written (phase \"$phase\")" test "$phase" = Pending
	msg=$(k get pod typo-0 -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
	check "coexist: the typo job's pod says its queue is missing (\"$msg\")" \
		grep -q 'queue "no-such-queue" not found' <<<"$msg"
	k patch pod gated-1 -n "$ns" --type=json -p '[{"op": "remove", "path": "/spec/schedulingGates"}]' >/dev/null
	check "coexist: the gated gang is bound whole once its gate is removed" wait_bound "$ns" 4 30
	k delete podgroups.scheduling.volcano.sh,podgroups.scheduling.x-k8s.io --all -n "$ns" >/dev/null 2>&1
	reset_case "$ns"
}

# /metrics and Queue status against the cluster's own record: a burst of
# gang jobs in two volcano Queues on three 4-GPU nodes (one gang can never
# fit), /metrics scraped while the burst lands and after; the per-queue
# allocated figures and per-node GPU figures must equal what the bound pods
# ask for (kubectl), each Queue's status must count its PodGroups by the
# phases they show, and sessions that change nothing write no status.
mx_gang() { # NS QUEUE NAME SIZE GPUS
	local i
	printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s, namespace: %s}\nspec: {minMember: %s, queue: %s}\n' "$3" "$1" "$4" "$2"
	for ((i = 0; i < $4; i++)); do
		printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%s, namespace: %s, annotations: {scheduling.volcano.sh/group-name: %s}}\nspec:\n  schedulerName: kube-batchd\n  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 500m}, limits: {nvidia.com/gpu: "%s"}}}]\n' "$3" "$i" "$1" "$3" "$5"
	done
}
# mx_value TEXT SERIES: the value of one series ("name{labels}") in TEXT.
mx_value() { awk -v m="$2" '$1 == m {print $2}' <<<"$1"; }
# mx_pod_sum NS FIELD: sum over NS's bound pods of cpu (milli) or gpu.
mx_pod_sum() {
	k get pods -n "$1" -o json | jq -r --arg f "$2" '[.items[] | select(.spec.nodeName != null) |
		.spec.containers[0].resources | if $f == "gpu" then (.limits["nvidia.com/gpu"] | tonumber)
		else (.requests.cpu | rtrimstr("m") | tonumber) end] | add // 0'
}
# mx_queue_matches Q NS: the Queue's status counts are its PodGroups' phases.
mx_queue_matches() {
	local want got
	want=$(k get podgroups.scheduling.volcano.sh -n "$2" -o json | jq -c '[.items[].status.phase] |
		{pending: map(select(. == "Pending")) | length, inqueue: map(select(. == "Inqueue")) | length,
		 running: map(select(. == "Running")) | length, unknown: map(select(. == "Unknown")) | length}')
	got=$(k get queues.scheduling.volcano.sh "$1" -o json | jq -c '.status | {pending: (.pending // 0),
		inqueue: (.inqueue // 0), running: (.running // 0), unknown: (.unknown // 0)}')
	echo "PodGroups $want, Queue status $got"
	[[ $want == "$got" ]]
}
case_metrics() {
	local qa qb na nb text during n gpus cpu st i w0 w1 s0 s1 s2 p0 p1
	qa=mq-a-$run qb=mq-b-$run
	na=$(mkns e2e-mqa); nb=$(mkns e2e-mqb)
	printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {weight: 1}\n' "$qa" "$qb" |
		k create -f - >/dev/null
	node mx-node-1 8 4; node mx-node-2 8 4; node mx-node-3 8 4
	start_sched || { fail "metrics: scheduler starts"; reset_case "$na" "$nb"; return; }
	{
		for i in 1 2 3; do mx_gang "$na" "$qa" a$i 2 1; done
		for i in 1 2; do mx_gang "$nb" "$qb" b$i 3 1; done
		mx_gang "$nb" "$qb" huge 1 5
	} | k create -f - >/dev/null
	during=$(curl -s "http://127.0.0.1:$port/metrics")
	check "metrics: /metrics answers during the burst (sessions_total $(mx_value "$during" kube_batchd_sessions_total))" \
		test -n "$(mx_value "$during" kube_batchd_sessions_total)"
	# Scrapes during the burst against the API's record read just before
	# each: a queue's allocated GPUs are at least what the API shows bound
	# (nothing is freed here) and at most its pods' asks; the nodes' GPUs
	# allocated never pass their total.
	local bad= b a gl
	for ((i = 0; i < 8; i++)); do
		b=$(mx_pod_sum "$na" gpu)
		during=$(curl -s "http://127.0.0.1:$port/metrics")
		a=$(mx_value "$during" "kube_batchd_queue_allocated_scalar_resources{queue_name=\"$qa\",resource=\"nvidia.com/gpu\"}")
		gl=$(awk '$1 ~ /^kube_batchd_node_gpu_allocated\{/ {split($1, k, "\""); al[k[2]] = $2}
			$1 ~ /^kube_batchd_node_gpu_total\{/ {split($1, k, "\""); to[k[2]] = $2}
			END {for (n in al) if (al[n] > to[n]) print n}' <<<"$during")
		[[ ${a:-0} -ge $b && ${a:-0} -le 6 && -z $gl ]] || bad+=" scrape $i: allocated ${a:-none}, API bound $b${gl:+, nodes over total: $gl};"
		sleep 0.2
	done
	check "metrics: 8 scrapes during the burst agree with the API's record read before each${bad:+:$bad}" test -z "$bad"
	check "metrics: the 12 one-GPU pods of both queues are bound" wait_bound "$na" 6 30
	wait_bound "$nb" 6 30
	sleep 1.5 # a few sessions after the last binding echoed
	text=$(curl -s "http://127.0.0.1:$port/metrics")
	for q in "$qa $na" "$qb $nb"; do
		set -- $q
		gpus=$(mx_value "$text" "kube_batchd_queue_allocated_scalar_resources{queue_name=\"$1\",resource=\"nvidia.com/gpu\"}")
		check "metrics: queue $1 allocated GPUs in /metrics ($gpus) = the bound pods' ($(mx_pod_sum "$2" gpu))" \
			test "${gpus:-x}" = "$(mx_pod_sum "$2" gpu)"
		cpu=$(mx_value "$text" "kube_batchd_queue_allocated_milli_cpu{queue_name=\"$1\"}")
		check "metrics: queue $1 allocated milli-cpu in /metrics ($cpu) = the bound pods' ($(mx_pod_sum "$2" cpu))" \
			test "${cpu:-x}" = "$(mx_pod_sum "$2" cpu)"
		check "metrics: queue $1 has a deserved GPU figure" \
			test -n "$(mx_value "$text" "kube_batchd_queue_deserved_scalar_resources{queue_name=\"$1\",resource=\"nvidia.com/gpu\"}")"
	done
	for n in mx-node-1 mx-node-2 mx-node-3; do
		gpus=$(k get pods -A -o json | jq --arg n "$n" '[.items[] | select(.spec.nodeName == $n) |
			.spec.containers[0].resources.limits["nvidia.com/gpu"] // "0" | tonumber] | add // 0')
		check "metrics: node $n GPUs allocated in /metrics = the pods bound there ($gpus), total 4" \
			test "$(mx_value "$text" "kube_batchd_node_gpu_allocated{node=\"$n\"}")/$(mx_value "$text" "kube_batchd_node_gpu_total{node=\"$n\"}")" = "$gpus/4"
	done
	n=$(awk '$1 ~ /^kube_batchd_pending_pods\{/ {s += $2} END {print s + 0}' <<<"$text")
	check "metrics: one pod pending (the gang that never fits) across the reason classes (got $n)" \
		test "$n" = 1
	check "metrics: attempts counted as scheduled (12 or more)" \
		test "$(mx_value "$text" 'kube_batchd_schedule_attempts_total{result="scheduled",profile="kube-batchd"}')" -ge 12
	check "metrics: e2e latency histogram counts every session" \
		test "$(mx_value "$text" 'kube_batchd_e2e_scheduling_latency_milliseconds_count')" = "$(mx_value "$text" kube_batchd_sessions_total)"
	check "metrics: process figures from /proc/self" test "$(mx_value "$text" process_resident_memory_bytes)" -gt 0
	for q in "$qa $na" "$qb $nb"; do
		set -- $q
		for ((i = 0; i < 25; i++)); do
			st=$(mx_queue_matches "$1" "$2") && break
			sleep 0.2
		done
		check "metrics: Queue $1 status counts its PodGroups' phases ($st)" mx_queue_matches "$1" "$2"
		gpus=$(k get queues.scheduling.volcano.sh "$1" -o jsonpath='{.status.allocated.nvidia\.com/gpu}/{.status.state}')
		check "metrics: Queue $1 status.allocated GPUs and state ($gpus) = $(mx_pod_sum "$2" gpu)/Open" \
			test "$gpus" = "$(mx_pod_sum "$2" gpu)/Open"
	done
	# Idle sessions: changes that give a session work but change nothing
	# the Queues show (a namespace's labels) write no status.
	w0=$(metric kube_batchd_queue_status_writes_total); s0=$(metric kube_batchd_sessions_total)
	p0=$(metric kube_batchd_status_writes_total)
	for i in 1 2 3; do
		k label namespace "$na" "e2e.kube-batchd.io/idle=$i" --overwrite >/dev/null
		sleep 0.7
	done
	w1=$(metric kube_batchd_queue_status_writes_total); s1=$(metric kube_batchd_sessions_total)
	p1=$(metric kube_batchd_status_writes_total)
	check "metrics: $((s1 - s0)) idle sessions (3 or more) wrote no Queue status ($w0 -> $w1) and no PodGroup status ($p0 -> $p1)" \
		test $((s1 - s0)) -ge 3 -a "$w1" = "$w0" -a "$p1" = "$p0"
	check "metrics: Queue status was written at least once per queue ($w1)" test "${w1:-0}" -ge 2
	# A change the Queue shows (a gang goes) is written.
	k delete pods -n "$na" a1-0 a1-1 --grace-period=0 --force >/dev/null 2>&1
	k delete podgroups.scheduling.volcano.sh a1 -n "$na" >/dev/null 2>&1
	for ((i = 0; i < 25; i++)); do
		st=$(k get queues.scheduling.volcano.sh "$qa" -o jsonpath='{.status.running}/{.status.allocated.nvidia\.com/gpu}')
		[[ $st == 2/4 ]] && break
		sleep 0.2
	done
	check "metrics: Queue $qa status follows a gang's deletion (running/GPUs $st, want 2/4)" test "$st" = 2/4
	s2=$(metric kube_batchd_queue_status_writes_total)
	# The pods' deletion and the PodGroup's may reach one session or two.
	check "metrics: that change cost one or two Queue status writes ($w1 -> $s2)" \
		test "$((s2 - w1))" -ge 1 -a "$((s2 - w1))" -le 2
	k delete podgroups.scheduling.volcano.sh --all -n "$na" >/dev/null 2>&1
	k delete podgroups.scheduling.volcano.sh --all -n "$nb" >/dev/null 2>&1
	k delete queues.scheduling.volcano.sh "$qa" "$qb" >/dev/null 2>&1
	reset_case "$na" "$nb"
}

for c in "${cases[@]}"; do
	case $c in
	mnist) case_mnist ;;
	too-big) case_too_big ;;
	queues) case_queues ;;
	gpu) case_gpu ;;
	gpu-sharing) case_gpu_sharing ;;
	many-names) case_many_names ;;
	vgpu) case_vgpu ;;
	restart) case_restart ;;
	leader) case_leader ;;
	preempt) case_preempt ;;
	deploy) case_deploy ;;
	flavours) case_flavours ;;
	tf-template) case_tf_template ;;
	pg-first) case_pg_first ;;
	coexist) case_coexist ;;
	metrics) case_metrics ;;
	*) fail "unknown case $c" ;;
	esac
done
e2e_summary
((fails == 0))

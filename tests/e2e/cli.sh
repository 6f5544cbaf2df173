#!/usr/bin/env bash
# The read-only commands against the local control plane (tests/cluster/up
# --kwok: the real kube-apiserver, kwok for the kubelets), with the daemon
# running and binding:
#   - `top nodes`: per node and in total, the GPUs Arena counts
#     (gpu_check.py's reproduction of `arena top node -d`) on whole-GPU
#     nodes, a node time-sliced by GFD's labels (2 GPUs x 4 replicas), a
#     gpushare node and a node with a kube-batchd.io/gpu-milli share;
#   - `top queues`: the Queues kubectl lists, with their weights, and each
#     one's nvidia.com/gpu allocated as the pods bound say;
#   - `top jobs`: each PodGroup's phase and pods bound as kubectl has them,
#     and a reason for the gang that waits;
#   - `explain`: the waiting gang lacks nvidia.com/gpu; an unknown PodGroup
#     is named in the error;
#   - `simulate --from-cluster -f new.yaml` predicts the pods the daemon
#     then binds once new.yaml is created (the same set);
#   - an unreachable server, bad credentials (401) and a user without
#     rights (403) are said with the server's address, exit status 1.
#
#   tests/e2e/cli.sh [--build BUILDDIR] [--keep]
#
# Exit 0 only if every check passed; 77 (skip) without kubectl, curl or
# python3. Environment: KB_E2E_DIR (control-plane dir; default a fresh temp
# dir, shut down at the end), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=cli e2e_help_end=24
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_args "$@"
e2e_need kubectl curl python3 flock setsid openssl
e2e_binary
e2e_dir kb-cli
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

"$root/tests/cluster/up" --kwok "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; fail "the control plane starts (tests/cluster/up --kwok)"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
skc=$dir/scheduler.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
kb() { "$bin" "$@" --kubeconfig "$skc"; }
server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
e2e_free_port || { fail "a free port for kube-batchd"; exit 1; }

# ---- the cluster -----------------------------------------------------------------

node() { # NAME LABELS(json) CAPACITY(json)
	cat <<EOF
---
apiVersion: v1
kind: Node
metadata: {name: $1, labels: $2}
status:
  capacity: $3
  allocatable: $3
EOF
}
pod() { # NS NAME NODE-SELECTOR(json) LIMITS(json) [GROUP] [ANNOTATIONS(json)]
	local ann
	ann=$(python3 -c 'import json, sys
a = json.loads(sys.argv[2] or "{}")
if sys.argv[1]:
    a["scheduling.k8s.io/group-name"] = sys.argv[1]
print(json.dumps(a))' "${5:-}" "${6:-}")
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, annotations: $ann}
spec:
  schedulerName: kube-batchd
  nodeSelector: $3
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 100m}, limits: $4}}]
EOF
}
podgroup() { # NS NAME MIN QUEUE
	cat <<EOF
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $2, namespace: $1}
spec: {minMember: $3, queue: $4}
EOF
}
queue() { # NAME WEIGHT [CAPABILITY(json)]
	cat <<EOF
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec: {weight: $2${3:+, capability: $3}}
EOF
}
ex='{pool: exclusive}'
{
	node g-ex1 '{kubernetes.io/hostname: g-ex1, pool: exclusive}' '{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "4"}'
	node g-ex2 '{kubernetes.io/hostname: g-ex2, pool: exclusive}' '{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "4"}'
	node g-ex3 '{kubernetes.io/hostname: g-ex3}' '{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "2"}'
	node g-ts '{kubernetes.io/hostname: g-ts, nvidia.com/gpu.product: Tesla-T4-SHARED, nvidia.com/gpu.count: "2", nvidia.com/gpu.replicas: "4", nvidia.com/gpu.sharing-strategy: time-slicing}' \
		'{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}'
	node g-gs '{kubernetes.io/hostname: g-gs, gpushare: "true"}' \
		'{cpu: "16", memory: 64Gi, pods: "110", aliyun.com/gpu-mem: "64", aliyun.com/gpu-count: "4"}'
	node cpu-1 '{kubernetes.io/hostname: cpu-1}' '{cpu: "8", memory: 32Gi, pods: "110"}'
	queue team-a 2
	queue team-b 1 '{nvidia.com/gpu: "16"}'
	echo '---'
	echo '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}'
	echo '---'
	echo '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}}'
} | k create -f - >/dev/null || { fail "the nodes, queues and namespaces are created"; exit 1; }

sched_log=$dir/kube-batchd.log
"$bin" --kubeconfig "$skc" --listen-address "127.0.0.1:$port" --schedule-delay 200ms -v 1 \
	>"$sched_log" 2>&1 &
sched_pid=$!
e2e_wait_healthy "$port" "$sched_pid" "$sched_log" || { fail "kube-batchd starts"; exit 1; }

# bound NS...: "ns/name" of the pods bound, sorted.
bound() {
	k get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.spec.nodeName}{"\n"}{end}' |
		grep -v '=$' | sed 's/=.*//' | sort
}
nbound() { bound | grep -c .; }
nbound_is() { test "$(nbound)" -ge "$1"; }

# Two GPU jobs of team-a (4+4 whole GPUs, 6 time-sliced replicas), team-b's
# pods on the gpushare node (8, 10 and 6 GiB), a whole GPU and a 0.3 share
# on g-ex3: 13 pods bound in all.
{
	podgroup team-a train-a 2 team-a
	pod team-a train-a-0 "$ex" '{nvidia.com/gpu: "4"}' train-a
	pod team-a train-a-1 "$ex" '{nvidia.com/gpu: "4"}' train-a
	podgroup team-a ts-job 3 team-a
	for i in 0 1 2 3 4 5; do pod team-a "ts-job-$i" '{kubernetes.io/hostname: g-ts}' '{nvidia.com/gpu: "1"}' ts-job; done
	pod team-b gs-a '{kubernetes.io/hostname: g-gs}' '{aliyun.com/gpu-mem: "8"}'
	pod team-b gs-b '{kubernetes.io/hostname: g-gs}' '{aliyun.com/gpu-mem: "10"}'
	pod team-b gs-c '{kubernetes.io/hostname: g-gs}' '{aliyun.com/gpu-mem: "6"}'
	pod team-b whole '{kubernetes.io/hostname: g-ex3}' '{nvidia.com/gpu: "1"}'
	pod team-b milli '{kubernetes.io/hostname: g-ex3}' '{cpu: "100m"}' '' '{"kube-batchd.io/gpu-milli": "300"}'
} | k create -f - >/dev/null || { fail "the GPU jobs are created"; exit 1; }
check "the 13 GPU pods are bound" wait_for 30 nbound_is 13
# The gang that waits: 2 x 4 GPUs on the exclusive pool, which train-a fills.
{
	podgroup team-b big 2 team-b
	pod team-b big-0 "$ex" '{nvidia.com/gpu: "4"}' big
	pod team-b big-1 "$ex" '{nvidia.com/gpu: "4"}' big
} | k create -f - >/dev/null
pg_unschedulable() {
	k get podgroups.scheduling.volcano.sh -n "$1" "$2" \
		-o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].status}' | grep -q True
}
check "the gang team-b/big waits (its PodGroup Unschedulable)" wait_for 20 pg_unschedulable team-b big
sleep 1
k get nodes -o json >"$dir/nodes.json"
k get pods -A -o json >"$dir/pods.json"
k get podgroups.scheduling.volcano.sh -A -o json >"$dir/podgroups.json"
k get queues.scheduling.volcano.sh -o json >"$dir/queues.json"

# ---- top nodes ---------------------------------------------------------------------

kb top nodes >"$dir/top-nodes.txt" 2>"$dir/top-nodes.err"
check "top nodes: exit 0" test $? = 0
kb top nodes -o json >"$dir/top-nodes.json" 2>>"$dir/top-nodes.err"
python3 "$here/gpu_check.py" "$dir/nodes.json" "$dir/pods.json" >"$dir/arena.txt"
check "gpu_check.py: the cluster is sound" test $? = 0
# Arena's view per node: "arena top node -d NAME: GPU mode exclusive,
# TotalGPUs T, UsedGPUs U/T" or "... share, TotalGPUs T, ..., AllocatedGPUs A, ...".
arena_nodes=$(python3 - "$dir/arena.txt" <<'EOF'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"arena top node -d (\S+): GPU mode (\w+), TotalGPUs (\d+), (?:UsedGPUs (\d+)/\d+|.*AllocatedGPUs (\d+))", line)
    if m:
        print(m.group(1), m.group(2), m.group(3), m.group(4) or m.group(5))
EOF
)
ours=$(python3 -c '
import json, sys
for n in json.load(open(sys.argv[1]))["nodes"]:
    if n["gpuMode"] != "none":
        print(n["name"], n["gpuMode"], n["gpuTotal"], n["gpuAllocated"])' "$dir/top-nodes.json" | sort)
arena_nodes=$(sort <<<"$arena_nodes")
check "top nodes: per node, Arena's mode, total and allocated GPUs (arena: $(tr '\n' ';' <<<"$arena_nodes"))" \
	test "$ours" = "$arena_nodes"
totals=$(awk '{t += $3; a += $4} END {print a "/" t}' <<<"$arena_nodes")
line=$(grep '^Allocated/Total GPUs In Cluster:' "$dir/top-nodes.txt")
check "top nodes: \"$line\" has Arena's totals $totals" grep -q "In Cluster: $totals (" <<<"$line"
check "top nodes: 17/22 GPUs (4+4+1 whole, 6 replicas, 2 gpushare devices)" test "$totals" = 17/22
check "top nodes: g-ts is time-sliced, 2 GPUs x4, 6 of 8 replicas used" \
	grep -qE '^g-ts +Ready +exclusive +8 +6 +time-slicing: 2 GPUs x4 +6/8 ' "$dir/top-nodes.txt"
check "top nodes: g-ex3 counts the 0.3 share in kube-batchd's books, not in Arena's" \
	grep -qE '^g-ex3 +Ready +exclusive +2 +1 +whole +1\.3/2 ' "$dir/top-nodes.txt"
check "top nodes: g-gs shows 24 of 64 GiB of gpu-mem" grep -qE '^g-gs +Ready +share +4 +2 +gpushare +- +24/64 ' "$dir/top-nodes.txt"

# ---- top queues --------------------------------------------------------------------

kb top queues -o json >"$dir/top-queues.json" 2>"$dir/top-queues.err"
check "top queues: exit 0" test $? = 0
kb top queues >"$dir/top-queues.txt" 2>>"$dir/top-queues.err"
# kubectl's view: each Queue's weight; nvidia.com/gpu of the pods bound,
# by their PodGroup's queue (lone pods: the default queue), a gpu-milli
# share counted as kube-batchd charges it (README: GPUs).
check "top queues: weights and GPUs allocated as kubectl's objects say" python3 - "$dir" <<'EOF'
import json, sys
d = sys.argv[1]
ours = {q["name"]: q for q in json.load(open(d + "/top-queues.json"))["queues"]}
queues = json.load(open(d + "/queues.json"))["items"]
pgs = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["spec"].get("queue", "default")
       for p in json.load(open(d + "/podgroups.json"))["items"]}
want = {}
for p in json.load(open(d + "/pods.json"))["items"]:
    if not p["spec"].get("nodeName"):
        continue
    ann = p["metadata"].get("annotations") or {}
    g = ann.get("scheduling.k8s.io/group-name")
    q = pgs.get((p["metadata"]["namespace"], g), "default") if g else "default"
    gpus = sum(float((c["resources"].get("limits") or {}).get("nvidia.com/gpu", 0)) for c in p["spec"]["containers"])
    if gpus == 0 and "kube-batchd.io/gpu-milli" in ann:
        gpus = int(ann["kube-batchd.io/gpu-milli"]) / 1000
    want[q] = want.get(q, 0) + gpus
bad = []
for q in queues:
    n = q["metadata"]["name"]
    if n not in ours:
        bad.append(f"queue {n} missing")
        continue
    if ours[n]["weight"] != q["spec"]["weight"]:
        bad.append(f"queue {n}: weight {ours[n]['weight']}, kubectl {q['spec']['weight']}")
for n, o in ours.items():
    got = float(o["allocated"].get("nvidia.com/gpu", "0").rstrip("m")) / (1000 if o["allocated"].get("nvidia.com/gpu", "").endswith("m") else 1)
    if abs(got - want.get(n, 0)) > 1e-9:
        bad.append(f"queue {n}: nvidia.com/gpu allocated {got}, kubectl's pods {want.get(n, 0)}")
    if n == "team-b" and o["pendingJobs"] != 1:
        bad.append(f"queue team-b: {o['pendingJobs']} pending jobs, want 1 (big)")
    if n == "team-b" and o["capability"].get("nvidia.com/gpu") != "16":
        bad.append(f"queue team-b: capability {o['capability']}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
check "top queues: team-a deserves a share (a session over the state read)" \
	grep -qE '^team-a +2 +[^-]' "$dir/top-queues.txt"

# ---- top jobs ----------------------------------------------------------------------

kb top jobs -o json >"$dir/top-jobs.json" 2>"$dir/top-jobs.err"
check "top jobs: exit 0" test $? = 0
kb top jobs >"$dir/top-jobs.txt" 2>>"$dir/top-jobs.err"
check "top jobs: each PodGroup's phase and pods bound as kubectl has them" python3 - "$dir" <<'EOF'
import json, sys
d = sys.argv[1]
ours = {j["name"]: j for j in json.load(open(d + "/top-jobs.json"))["jobs"]}
pods = json.load(open(d + "/pods.json"))["items"]
bad = []
for pg in json.load(open(d + "/podgroups.json"))["items"]:
    key = pg["metadata"]["namespace"] + "/" + pg["metadata"]["name"]
    o = ours.get(key)
    if not o:
        bad.append(f"{key} missing")
        continue
    n = sum(1 for p in pods if p["metadata"]["namespace"] == pg["metadata"]["namespace"]
            and (p["metadata"].get("annotations") or {}).get("scheduling.k8s.io/group-name") == pg["metadata"]["name"]
            and p["spec"].get("nodeName"))
    if o["running"] != n:
        bad.append(f"{key}: {o['running']} running, kubectl {n}")
    if o["phase"] != (pg.get("status") or {}).get("phase", "Pending"):
        bad.append(f"{key}: phase {o['phase']}, kubectl {(pg.get('status') or {}).get('phase')}")
    if o["minMember"] != pg["spec"]["minMember"]:
        bad.append(f"{key}: minMember {o['minMember']}")
    if o["queue"] != pg["spec"]["queue"]:
        bad.append(f"{key}: queue {o['queue']}")
if not ours.get("team-b/big", {}).get("waiting") or "nvidia.com/gpu" not in ours.get("team-b/big", {}).get("reason", ""):
    bad.append(f"team-b/big: not waiting for nvidia.com/gpu: {ours.get('team-b/big')}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
check "top jobs: the table gives team-b/big's reason" grep -qE '^team-b/big +team-b +.*0/2 .*nvidia\.com/gpu' "$dir/top-jobs.txt"

# ---- explain -----------------------------------------------------------------------

kb explain team-b/big >"$dir/explain.txt" 2>"$dir/explain.err"
check "explain: exit 0" test $? = 0
check "explain: team-b/big waits" grep -q '^PodGroup team-b/big: waiting' "$dir/explain.txt"
check "explain: the scheduler's reason names nvidia.com/gpu" \
	grep -qE '^  - gang .*nvidia\.com/gpu' "$dir/explain.txt"
check "explain: by requests alone, the nodes are short of nvidia.com/gpu" grep -qE 'short of nvidia\.com/gpu' "$dir/explain.txt"
check "explain: it runs once team-a/train-a (and only it) finishes" \
	test "$(grep -cE '^      team-a/train-a \(priority 0' "$dir/explain.txt"):$(grep -c '^  - 1 job holding room' "$dir/explain.txt")" = 1:1
kb explain team-b/big -o json >"$dir/explain.json" 2>>"$dir/explain.err"
check "explain -o json: state waiting" python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["state"] != "waiting")' "$dir/explain.json"
out=$(kb explain team-b/nosuch 2>&1)
rc=$?
check "explain: an unknown PodGroup is named, exit 1 (got $rc: $out)" \
	test "$rc" = 1 -a -n "$(grep -F 'PodGroup "team-b/nosuch" not found' <<<"$out")"

# ---- simulate --from-cluster -------------------------------------------------------

{
	podgroup team-a new-ts 2 team-a
	pod team-a new-ts-0 '{kubernetes.io/hostname: g-ts}' '{nvidia.com/gpu: "1"}' new-ts
	pod team-a new-ts-1 '{kubernetes.io/hostname: g-ts}' '{nvidia.com/gpu: "1"}' new-ts
	pod team-b new-cpu '{kubernetes.io/hostname: cpu-1}' '{cpu: "1"}'
	pod team-b new-nofit "$ex" '{nvidia.com/gpu: "2"}'
} >"$dir/new.yaml"
kb simulate --from-cluster -f "$dir/new.yaml" -o json >"$dir/sim.json" 2>"$dir/sim.err"
check "simulate --from-cluster: exit 0" test $? = 0
predicted=$(python3 -c 'import json,sys; print("\n".join(sorted(b["pod"] for b in json.load(open(sys.argv[1]))["bindings"])))' "$dir/sim.json")
check "simulate --from-cluster: predicts new-ts (2 replicas) and new-cpu bound, new-nofit not (got: $(tr '\n' ' ' <<<"$predicted"))" \
	test "$predicted" = "$(printf 'team-a/new-ts-0\nteam-a/new-ts-1\nteam-b/new-cpu')"
check "simulate --from-cluster: new-nofit pending with a reason" \
	python3 -c 'import json,sys; sys.exit(not any(p["pod"] == "team-b/new-nofit" and p["reason"] for p in json.load(open(sys.argv[1]))["pending"]))' "$dir/sim.json"
before=$(bound)
k create -f "$dir/new.yaml" >/dev/null
wait_for 20 nbound_is $(($(grep -c . <<<"$before") + $(grep -c . <<<"$predicted")))
sleep 2 # more sessions: nothing more may be bound
actual=$(comm -13 <(echo "$before") <(bound))
check "simulate --from-cluster: the daemon bound what it predicted (daemon: $(tr '\n' ' ' <<<"$actual"))" \
	test "$actual" = "$predicted"

# ---- a queue only the daemon's queue file has ---------------------------------------

podgroup team-a file-q 1 from-file | k create -f - >/dev/null
kb top jobs >/dev/null 2>"$dir/fileq.err"
check "top without --queue-conf: a PodGroup naming a queue no Queue object has is noted, with the flag to pass" \
	grep -qF 'note: PodGroup "team-a/file-q" names queue "from-file", which is no Queue object' "$dir/fileq.err"
printf 'queues:\n- name: from-file\n  weight: 1\n' >"$dir/fileq.yaml"
kb top jobs --queue-conf "$dir/fileq.yaml" >/dev/null 2>"$dir/fileq.err"
check "top with the queue file: no note" test ! -s "$dir/fileq.err"
k delete podgroups.scheduling.volcano.sh file-q -n team-a >/dev/null 2>&1

# ---- errors ------------------------------------------------------------------------

e2e_free_port dead || { fail "a free port"; exit 1; }
out=$("$bin" top nodes --master "https://127.0.0.1:$dead" 2>&1)
rc=$?
check "unreachable: exit 1, the address named (got $rc: $out)" \
	test "$rc" = 1 -a -n "$(grep -F "cannot reach the API server at https://127.0.0.1:$dead" <<<"$out")"
sed 's/token: .*/token: not-a-token/' "$skc" >"$dir/bad.kubeconfig"
out=$("$bin" top nodes --kubeconfig "$dir/bad.kubeconfig" 2>&1)
rc=$?
check "bad token: 401 said, exit 1 (got $rc: $out)" \
	test "$rc" = 1 -a -n "$(grep -F "the API server at $server answered 401 Unauthorized" <<<"$out")"
k create serviceaccount nobody -n default >/dev/null
tok=$(k create token nobody -n default)
sed "s/token: .*/token: $tok/" "$skc" >"$dir/nobody.kubeconfig"
out=$("$bin" top jobs --kubeconfig "$dir/nobody.kubeconfig" 2>&1)
rc=$?
check "no rights: 403 said, exit 1 (got $rc: ${out:0:300})" \
	test "$rc" = 1 -a -n "$(grep -F "the API server at $server answered 403 Forbidden" <<<"$out")"
# One resource refused, the rest readable: simulate --from-cluster names the
# one (what `kubectl auth can-i` would say no to), not just "403".
k apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cli-all-but-pods}
rules:
- apiGroups: ["*"]
  resources: [nodes, namespaces, priorityclasses, persistentvolumeclaims, persistentvolumes,
    storageclasses, csinodes, volumeattachments, csidrivers, csistoragecapacities, podgroups,
    queues, workloads]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: cli-all-but-pods}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cli-all-but-pods}
subjects: [{kind: ServiceAccount, name: nobody, namespace: default}]
EOF
out=$("$bin" simulate --from-cluster --kubeconfig "$dir/nobody.kubeconfig" 2>&1)
rc=$?
check "simulate --from-cluster with pods refused: exit 1, the 403 and the pods' LIST named (got $rc: ${out:0:300})" \
	test "$rc" = 1 -a -n "$(grep -F "answered 403 Forbidden to LIST /api/v1/pods" <<<"$out")"
check "kube-batchd logged no error meanwhile" test -z "$(grep -E '^E' "$sched_log")"

e2e_summary
((fails == 0))

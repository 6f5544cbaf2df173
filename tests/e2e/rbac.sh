#!/usr/bin/env bash
# End-to-end: deploy/rbac.yaml is least privilege, proven against the real
# kube-apiserver (tests/cluster/up with kwok and an audit log).
#
#   tests/e2e/rbac.sh [--build BUILDDIR] [--keep] [CASE...]
#
# Cases (default: all):
#   used    the daemon, with the scheduler's restricted credentials and
#           --leader-elect, schedules a workload that makes it use every
#           kind of request it has (PodGroups of the four CRD families and
#           their status, Queues of two, a bind, a preemption's eviction, an
#           unschedulable pod's condition and its repeated Event, a
#           volume's claimRef, a claim's selected-node, the Lease); the
#           API server's audit log then shows no request of the scheduler's
#           refused, and every grant of the ClusterRole and the lease Role
#           used, but for those named in `unused_ok` below with the reason.
#   denied  the scheduler's account is refused (403) what it must not do:
#           read or renew another Lease, a Lease in another namespace,
#           Secrets, ConfigMaps, deleting a Node, creating, deleting or
#           changing a pod, and (deploy/podgroup-policy.yaml, an admission
#           policy: RBAC cannot narrow a patch) changing a PodGroup's spec,
#           while annotating one is let through.
# deploy/podgroup-policy.yaml is applied at the start, with the test user's
# name for the ServiceAccount's, so that `used` runs under it too.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=rbac e2e_help_end=25
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fixtures=$here/fixtures
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(used denied)
e2e_need kubectl curl openssl flock setsid python3
[[ -x $root/tests/cluster/up ]] || { echo "rbac: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-rbac
sched_pid=
policy=$dir.audit-policy.yaml
cleanup() {
	stop_sched
	e2e_release_dir
	rm -f "$policy"
}
trap cleanup EXIT

# The PV controller (kube-controller-manager's persistentvolume-binder)
# makes volumes Available, so that the scheduler may pick one.
# The audit log records the scheduler user's requests only, each once
# (the stage at which the answer's code is known).
cat >"$policy" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: Metadata
  users: [kube-batchd-scheduler]
- level: None
EOF
audit=$dir/audit.log
KB_CLUSTER_APISERVER_FLAGS="--audit-policy-file=$policy --audit-log-path=$audit --audit-log-format=json --audit-log-mode=blocking" \
	KB_CLUSTER_CONTROLLERS=persistentvolume-binder "$root/tests/cluster/up" --kwok --controllers "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; echo "FAIL: control plane did not start"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
schedcfg=$dir/scheduler.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
ks() { kubectl --kubeconfig "$schedcfg" "$@"; }
e2e_free_port || { fail "a free port"; exit 1; }
sed "s/system:serviceaccount:kube-system:kube-batchd'/kube-batchd-scheduler'/" \
	"$root/deploy/podgroup-policy.yaml" >"$dir/podgroup-policy.yaml"
grep -q "== 'kube-batchd-scheduler'" "$dir/podgroup-policy.yaml" &&
	k apply -f "$dir/podgroup-policy.yaml" >/dev/null ||
	fail "deploy/podgroup-policy.yaml applies (for the test user)"

# The grants a request of the scheduler may leave unused here, and why.
unused_ok=(
	"scheduling.k8s.io podgroups list|Kubernetes' own PodGroups are served from v1.36 (k8s-gang.sh, tests/cluster/up --next)"
	"scheduling.k8s.io podgroups watch|as above"
	"scheduling.k8s.io podgroups/status patch|as above"
	"scheduling.k8s.io podgroups patch|as above"
	"scheduling.k8s.io workloads list|v1.35's Workloads are served only with --runtime-config (k8s-gang.sh)"
	"scheduling.k8s.io workloads watch|as above"
)

# ---- the workload --------------------------------------------------------
workload() {
	local fam ns
	k create -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Node
metadata: {name: rbac-node, labels: {kubernetes.io/hostname: rbac-node}}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: rbac-low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: rbac-high}
value: 1000
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: rbac-volcano}
spec: {weight: 1}
---
apiVersion: scheduling.incubator.k8s.io/v1alpha1
kind: Queue
metadata: {name: rbac-kube-batch}
spec: {weight: 1}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: rbac-local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: rbac-dynamic}
provisioner: example.com/never-runs
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: rbac-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: rbac-local
  local: {path: /mnt/rbac}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [rbac-node]}]}]
EOF
	# One gang of each PodGroup family, two pods of 250m each, and one that
	# never fits.
	for fam in volcano incubator xk8s sigs; do
		ns=rbac-$fam
		k create namespace "$ns" >/dev/null || return 1
		case $fam in
		volcano) pg="apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: g, namespace: $ns}
spec: {minMember: 2, queue: rbac-volcano}"
			grp="annotations: {scheduling.k8s.io/group-name: g}" ;;
		incubator) pg="apiVersion: scheduling.incubator.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: $ns}
spec: {minMember: 2, queue: rbac-kube-batch}"
			grp="annotations: {scheduling.k8s.io/group-name: g}" ;;
		xk8s) pg="apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: $ns}
spec: {minMember: 2}"
			grp="labels: {scheduling.x-k8s.io/pod-group: g}" ;;
		sigs) pg="apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: $ns}
spec: {minMember: 2}"
			grp="labels: {pod-group.scheduling.sigs.k8s.io: g}" ;;
		esac
		k create -f - >/dev/null <<EOF || return 1
$pg
---
$(for i in 0 1; do cat <<POD
apiVersion: v1
kind: Pod
metadata: {name: m$i, namespace: $ns, $grp}
spec:
  schedulerName: kube-batchd
  priorityClassName: rbac-low
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 250m}}}]
---
POD
done)
EOF
		# ... and one that never fits: pending, it gets an estimated start
		# (kube-batchd.io/estimated-start, a patch of the PodGroup).
		k create -f - >/dev/null <<EOF || return 1
${pg//"{name: g,"/"{name: big,"}
---
$(for i in 0 1; do cat <<POD
apiVersion: v1
kind: Pod
metadata: {name: big$i, namespace: $ns, ${grp//": g}"/": big}"}}
spec:
  schedulerName: kube-batchd
  priorityClassName: rbac-low
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "100"}}}]
---
POD
done)
EOF
	done
	k create namespace rbac-lone >/dev/null || return 1
	# A lone low-priority pod of 5 cpu (1 left), then a high-priority one
	# of 5 that only fits once the first is evicted.
	lone_pod victim rbac-low 5 || return 1
	wait_for 30 bound rbac-lone victim || return 1
	lone_pod preemptor rbac-high 5 || return 1
	# Never fits: its PodScheduled condition and a repeated Event.
	lone_pod too-big rbac-low 100 || return 1
	# Claims of a WaitForFirstConsumer class: a local volume to pick
	# (claimRef), a class to provision (selected-node). Nothing completes
	# them here (no PV controller); the writes are what is looked at.
	k create -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: local-claim, namespace: rbac-lone}
spec: {storageClassName: rbac-local, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dynamic-claim, namespace: rbac-lone}
spec: {storageClassName: rbac-dynamic, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: with-volumes, namespace: rbac-lone}
spec:
  schedulerName: kube-batchd
  priorityClassName: rbac-high
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: 100m}}}]
  volumes:
  - {name: a, persistentVolumeClaim: {claimName: local-claim}}
  - {name: b, persistentVolumeClaim: {claimName: dynamic-claim}}
EOF
}

# lone_pod NAME PRIORITYCLASS CPU
lone_pod() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: rbac-lone}
spec:
  schedulerName: kube-batchd
  priorityClassName: $2
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "$3"}}}]
EOF
}
bound() { [[ -n $(k get pod "$2" -n "$1" -o 'jsonpath={.spec.nodeName}' 2>/dev/null) ]]; }
estimated() { [[ -n $(k get "podgroups.$1" big -n "$2" -o 'jsonpath={.metadata.annotations.kube-batchd\.io/estimated-start}' 2>/dev/null) ]]; }
pv_claimed() { [[ -n $(k get pv "$1" -o 'jsonpath={.spec.claimRef.name}' 2>/dev/null) ]]; }

# audited VERB RESOURCE: the audit log has a request of the scheduler's.
audited() {
	python3 - "$audit" "$1" "$2" <<'EOF'
import json, sys
want_verb, want_res = sys.argv[2], sys.argv[3]
for line in open(sys.argv[1]):
    e = json.loads(line)
    o = e.get("objectRef") or {}
    res = o.get("resource", "") + ("/" + o["subresource"] if o.get("subresource") else "")
    if e["user"]["username"] == "kube-batchd-scheduler" and e["verb"] == want_verb and res == want_res:
        sys.exit(0)
sys.exit(1)
EOF
}

# The audit log against the grants: prints every refused request and every
# grant never used (but those in unused_ok); fails on either.
audit_vs_grants() {
	k get clusterrole kube-batchd -o json >"$dir/clusterrole.json" &&
		k get role kube-batchd-leader-election -n kube-system -o json >"$dir/role.json" || return 1
	printf '%s\n' "${unused_ok[@]}" >"$dir/unused-ok.txt"
	python3 - "$audit" "$dir/clusterrole.json" "$dir/role.json" "$dir/unused-ok.txt" <<'EOF'
import json, sys
audit, croles, role, ok_file = sys.argv[1:5]
used, refused = set(), []
for line in open(audit):
    e = json.loads(line)
    if e["user"]["username"] != "kube-batchd-scheduler":
        continue
    o = e.get("objectRef")
    if not o:  # discovery (/apis ...): open to every user
        continue
    res = o.get("resource", "") + ("/" + o["subresource"] if o.get("subresource") else "")
    code = (e.get("responseStatus") or {}).get("code", 0)
    key = (o.get("apiGroup", ""), res, e["verb"])
    if code == 403:
        refused.append("%s %s %s %s/%s" % (key + (o.get("namespace", ""), o.get("name", ""))))
    used.add(key)
ok = {}
for line in open(ok_file):
    what, why = line.rstrip("\n").split("|", 1)
    ok[what] = why
bad = 0
for r in refused:
    print("REFUSED: " + r); bad = 1
for f in (croles, role):
    for rule in json.load(open(f))["rules"]:
        for g in rule.get("apiGroups", []):
            for res in rule.get("resources", []):
                for v in rule.get("verbs", []):
                    name = "%s %s %s" % (g or "core", res, v)
                    if (g, res, v) in used:
                        print("used: " + name)
                    elif name in ok:
                        print("unused here: %s (%s)" % (name, ok[name]))
                    else:
                        print("UNUSED GRANT: " + name); bad = 1
sys.exit(bad)
EOF
}

case_used() {
	local log=$dir/scheduler.log qfile=$dir/queues.yaml
	# A queue file mapping a namespace: the daemon then lists Namespaces.
	# The lone pods' queue weighs most, so that its deserved share (the
	# gangs that never fit ask for a lot) covers what it is given.
	cat >"$qfile" <<'EOF'
queues:
- name: default
  weight: 1
- name: lone
  weight: 100
  namespaces: [rbac-lone]
EOF
	"$bin" --kubeconfig "$schedcfg" --listen-address "127.0.0.1:$port" --schedule-period 200ms \
		--scheduler-conf "$fixtures/scheduler.conf" --queue-conf "$qfile" --leader-elect \
		--leader-elect-retry-period 1s -v 2 >"$log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$log" || { fail "used: the daemon becomes healthy"; return; }
	workload || { fail "used: creating the workload"; return; }
	check "used: the gangs of the four families are bound" \
		wait_for 30 bound rbac-sigs m1
	check "used: the high-priority pod is bound once the low one is evicted" \
		wait_for 40 bound rbac-lone preemptor
	check "used: the local volume gets the pod's claim (claimRef)" \
		wait_for 20 pv_claimed rbac-pv
	# An unschedulable pod's Event is created, then patched with a new count
	# when it repeats: too-big's message names the largest free cpu, a
	# filler of 300m changes it, the filler's deletion brings it back.
	check "used: the unschedulable pod's Event is created" wait_for 20 audited create events
	lone_pod filler rbac-low 300m && wait_for 20 bound rbac-lone filler &&
		sleep 1 && k delete pod filler -n rbac-lone --wait=false >/dev/null ||
		fail "used: a filler pod is bound and deleted"
	check "used: the repeated Event is patched, not created again" wait_for 30 audited patch events
	# The gangs that never fit get their estimated start (a patch of each
	# family's PodGroup) within the estimator's spacing (5 s after a change).
	local fam group
	for fam in volcano:scheduling.volcano.sh incubator:scheduling.incubator.k8s.io \
		xk8s:scheduling.x-k8s.io sigs:scheduling.sigs.k8s.io; do
		group=${fam#*:} fam=${fam%%:*}
		check "used: rbac-$fam/big gets its kube-batchd.io/estimated-start" \
			wait_for 30 estimated "$group" "rbac-$fam"
	done
	stop_sched
	check "used: no request refused, every grant used (audit log vs. ClusterRole and Role)" \
		audit_vs_grants
}

# sched_patch NS NAME JSON: a merge PATCH of PodGroup NS/NAME
# (scheduling.incubator.k8s.io) with the scheduler's credentials, sent
# straight (kubectl patch GETs first, which the account may not); prints
# the HTTP status, the body to $dir/patch.out.
sched_patch() {
	local server token
	server=$(ks config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
	token=$(ks config view --raw --minify -o jsonpath='{.users[0].user.token}')
	ks config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
		base64 -d >"$dir/ca.pem"
	curl -sS -o "$dir/patch.out" -w '%{http_code}' --cacert "$dir/ca.pem" \
		-H "Authorization: Bearer $token" -H 'Content-Type: application/merge-patch+json' \
		-X PATCH --data "$3" \
		"$server/apis/scheduling.incubator.k8s.io/v1alpha1/namespaces/$1/podgroups/$2"
}

# patched CODE TEXT JSON: sched_patch of rbac-denied/pg answers CODE, its
# body holding TEXT.
patched() {
	local code
	code=$(sched_patch rbac-denied pg "$3")
	[[ $code == "$1" ]] && grep -q -- "$2" "$dir/patch.out" && return 0
	echo "HTTP $code: $(cat "$dir/patch.out")" >&2
	return 1
}

# refused CMD...: the scheduler's kubectl is refused with 403 Forbidden.
refused() {
	local out
	out=$(ks "$@" 2>&1) && { echo "allowed: kubectl $*" >&2; return 1; }
	grep -q 'Forbidden\|forbidden' <<<"$out" || { echo "not a 403: $out" >&2; return 1; }
}

case_denied() {
	k create namespace rbac-denied >/dev/null 2>&1
	k create -f - >/dev/null <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: some-other-lease, namespace: kube-system}
spec: {holderIdentity: someone, leaseDurationSeconds: 15}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: rbac-denied}
stringData: {k: v}
---
apiVersion: v1
kind: Node
metadata: {name: rbac-denied-node}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: rbac-denied}
spec:
  schedulerName: default-scheduler
  containers: [{name: main, image: registry.k8s.io/pause:3.9}]
EOF
	check "denied: read another Lease" refused get lease some-other-lease -n kube-system
	check "denied: patch another Lease" refused annotate lease some-other-lease -n kube-system x=y
	k get lease some-other-lease -n kube-system -o json >"$dir/other-lease.json"
	check "denied: renew (update) another Lease" refused replace -f "$dir/other-lease.json"
	check "denied: a Lease in another namespace" refused create -f - <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: kube-batchd, namespace: rbac-denied}
spec: {holderIdentity: me}
EOF
	check "denied: list Leases" refused get leases -n kube-system
	check "denied: read Secrets" refused get secret s -n rbac-denied
	check "denied: list Secrets" refused get secrets -A
	check "denied: read ConfigMaps" refused get configmaps -A
	check "denied: delete a Node" refused delete node rbac-denied-node --wait=false
	check "denied: change a Node" refused label node rbac-denied-node x=y
	check "denied: delete a pod" refused delete pod p -n rbac-denied --wait=false
	check "denied: change a pod" refused label pod p -n rbac-denied x=y
	check "denied: create a pod" refused run q -n rbac-denied --image=registry.k8s.io/pause:3.9
	check "denied: read a pod (nothing GETs one object)" refused get pod p -n rbac-denied
	k create -f - >/dev/null <<EOF
apiVersion: scheduling.incubator.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: rbac-denied}
spec: {minMember: 2}
EOF
	check "denied: change a PodGroup's spec (deploy/podgroup-policy.yaml)" \
		patched 403 'never its spec' '{"spec":{"minMember":1}}'
	check "denied: ... and the spec is as it was" \
		test "$(k get podgroups.scheduling.incubator.k8s.io pg -n rbac-denied -o jsonpath='{.spec.minMember}')" = 2
	check "allowed: annotate a PodGroup (what the estimate writes)" \
		patched 200 '' '{"metadata":{"annotations":{"kube-batchd.io/x":"y"}}}'
	# What it needs still works with the same credentials.
	check "allowed: list pods" eval "ks get pods -n rbac-denied -o name >/dev/null"
}

for c in "${cases[@]}"; do
	case $c in
	used | denied) "case_$c" ;;
	*) fail "unknown case $c" ;;
	esac
done
e2e_summary
((fails == 0))

#!/usr/bin/env bash
# End-to-end: volume binding against the controller manager's volume
# controllers. The local control plane runs kube-controller-manager's
# persistentvolume-binder (the PV controller) with its in-tree hostPath
# provisioner (--enable-hostpath-provisioner, kubernetes.io/host-path);
# the daemon runs with the scheduler's restricted credentials.
#
#   tests/e2e/volumes.sh [--build BUILDDIR] [--keep] [CASE...]
#
# Cases (default: all):
#   immediate  a claim of an Immediate class with no volume keeps its pod
#              pending with kube-scheduler's reason; a matching volume made
#              later is bound by the PV controller, then the pod is bound.
#   local      a gang whose claims wait for their first consumer, local
#              volumes on two nodes: kube-batchd sets each volume's claimRef,
#              the PV controller binds, each member is bound on its
#              volume's node.
#   waits      a gang of three with volumes for two: nobody is bound while
#              the third waits; the third volume appears, all three bound.
#   dynamic    a WaitForFirstConsumer class with a provisioner: kube-batchd
#              writes volume.kubernetes.io/selected-node, the hostPath
#              provisioner makes the volumes, the members are bound there.
#   rwop       a ReadWriteOncePod claim wanted by two pods: one bound, the
#              other waits with kube-scheduler's reason until the first goes;
#              the same round by upstream kube-scheduler must agree.
#   rwop-preempt  the holder of a ReadWriteOncePod claim (priority 100) is
#              preempted for a pod that needs the claim (priority 1000), and
#              a lower-priority pod beside it is not; then that pod is
#              bound. The same round by upstream kube-scheduler must agree.
#   capacity   storage capacity: a driver that publishes it (CSIDriver
#              storageCapacity, CSIStorageCapacity per zone): a claim is given
#              the node whose zone has room for it, one too big for every
#              zone waits with kube-scheduler's reason. The same round by
#              upstream kube-scheduler must agree.
#   csi        CSI volume limits: a node whose CSINode allows 2 volumes of a
#              driver, one held by a VolumeAttachment and one by a pod: a
#              pod with another volume waits with kube-scheduler's reason, a
#              pod sharing the held volume is bound; once the
#              VolumeAttachment goes, the waiting pod is bound. The same
#              round by upstream kube-scheduler must agree.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=volumes e2e_help_end=41
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fixtures=$here/fixtures
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(immediate local waits dynamic rwop rwop-preempt capacity csi)
e2e_need kubectl curl openssl flock setsid python3
[[ -x $root/tests/cluster/up ]] || { echo "volumes: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-volumes
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

KB_CLUSTER_CONTROLLERS=persistentvolume-binder KB_CLUSTER_KCM_FLAGS=--enable-hostpath-provisioner \
	"$root/tests/cluster/up" --controllers "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; echo "FAIL: control plane did not start"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
e2e_watch_invariants
schedcfg=$dir/scheduler.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
e2e_free_port || { fail "a free port"; exit 1; }
run=$(printf '%04x' $((RANDOM % 65536)))

log=$dir/scheduler.log
# start_daemon: kube-batchd with the scheduler's credentials (log appended).
start_daemon() {
	"$bin" --kubeconfig "$schedcfg" --listen-address "127.0.0.1:$port" --schedule-period 200ms -v 2 \
		--scheduler-conf "$fixtures/scheduler.conf" >>"$log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$port" "$sched_pid" "$log"
}
start_daemon || { fail "the daemon becomes healthy"; exit 1; }

# node NAME GPUS
node() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1}}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "$2"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "$2"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF
}
# local_pv NAME NODE SIZE CLASS
local_pv() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec:
  capacity: {storage: $3}
  accessModes: [ReadWriteOnce]
  storageClassName: $4
  persistentVolumeReclaimPolicy: Retain
  local: {path: /mnt/$1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$2]}]
EOF
}
# claim NS NAME CLASS
claim() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $2, namespace: $1}
spec:
  storageClassName: $3
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}}
EOF
}
# gang NS NAME SIZE: a PodGroup of SIZE and its members NAME-i, each with
# the claim NAME-data-i and one GPU.
gang() {
	k create -f - >/dev/null <<EOF
apiVersion: scheduling.incubator.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: $2, namespace: $1}
spec: {minMember: $3}
EOF
	local i
	for ((i = 0; i < $3; i++)); do
		k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $1, annotations: {scheduling.k8s.io/group-name: $2}}
spec:
  schedulerName: kube-batchd
  containers: [{name: w, image: tf, resources: {requests: {cpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: $2-data-$i}}]
EOF
	done
}
nbound() { k get pods -n "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }
bound_is() { [[ $(nbound "$1") == "$2" ]]; }
claim_bound() { [[ $(k get pvc -n "$1" "$2" -o jsonpath='{.status.phase}') == Bound ]]; }
pod_node() { k get pod -n "$1" "$2" -o jsonpath='{.spec.nodeName}'; }
pv_of() { k get pvc -n "$1" "$2" -o jsonpath='{.spec.volumeName}'; }
pv_node() { k get pv "$1" -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}'; }

k create -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual-$run}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-$run}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: hostpath-$run}
provisioner: kubernetes.io/host-path
volumeBindingMode: WaitForFirstConsumer
EOF
node vol-a-$run 8
node vol-b-$run 2
node vol-c-$run 2

case_immediate() {
	local ns=imm-$run
	k create namespace "$ns" >/dev/null
	claim "$ns" scratch "manual-$run"
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: $ns}
spec:
  schedulerName: kube-batchd
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: s, persistentVolumeClaim: {claimName: scratch}}]
EOF
	check "immediate: pending with kube-scheduler's reason" \
		wait_for 20 bash -c "kubectl --kubeconfig '$admin' get pod -n $ns p -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'pod has unbound immediate PersistentVolumeClaims'"
	check "immediate: not bound meanwhile" bound_is "$ns" 0
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: manual-$run}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual-$run
  hostPath: {path: /tmp/kb-volumes-$run}
EOF
	check "immediate: the PV controller binds the claim" wait_for 60 claim_bound "$ns" scratch
	check "immediate: then the pod is bound" wait_for 30 bound_is "$ns" 1
}

case_local() {
	local ns=local-$run
	k create namespace "$ns" >/dev/null
	local_pv "lb-$run" "vol-b-$run" 10Gi "local-$run"
	local_pv "lc-$run" "vol-c-$run" 20Gi "local-$run"
	local_pv "la-$run" "vol-a-$run" 1Gi "local-$run"
	claim "$ns" g-data-0 "local-$run"
	claim "$ns" g-data-1 "local-$run"
	gang "$ns" g 2
	check "local: both claims bound by the PV controller" \
		wait_for 60 bash -c "[[ \$(kubectl --kubeconfig '$admin' get pvc -n $ns -o jsonpath='{.items[*].status.phase}') == 'Bound Bound' ]]"
	check "local: both members bound" wait_for 30 bound_is "$ns" 2
	local i ok=1
	for i in 0 1; do
		local pv n
		pv=$(pv_of "$ns" "g-data-$i")
		n=$(pod_node "$ns" "g-$i")
		[[ -n $pv && $(pv_node "$pv") == "$n" ]] || { ok=0; echo "g-$i on '$n', its volume '$pv' on '$(pv_node "$pv")'" >&2; }
		[[ $pv != "la-$run" ]] || ok=0
	done
	check "local: each member on its volume's node, the too-small volume unused" test $ok = 1
}

case_waits() {
	local ns=waits-$run
	k create namespace "$ns" >/dev/null
	local_pv "wb-$run" "vol-b-$run" 10Gi "local-$run"
	local_pv "wc-$run" "vol-c-$run" 10Gi "local-$run"
	local i
	for i in 0 1 2; do claim "$ns" w-data-$i "local-$run"; done
	gang "$ns" w 3
	sleep 5
	check "waits: no member bound while one claim has no volume" bound_is "$ns" 0
	check "waits: no claim bound meanwhile" \
		test -z "$(k get pvc -n "$ns" -o jsonpath='{.items[*].spec.volumeName}')"
	check "waits: the reason is kube-scheduler's" \
		bash -c "kubectl --kubeconfig '$admin' get pods -n $ns -o json | grep -q \"didn't find available persistent volumes to bind\""
	local_pv "wa-$run" "vol-a-$run" 10Gi "local-$run"
	local partial=0 t
	for ((t = 0; t < 240; t++)); do
		local n
		n=$(nbound "$ns")
		[[ $n == 0 || $n == 3 ]] || partial=1
		[[ $n == 3 ]] && break
		sleep 0.25
	done
	check "waits: all three bound once the third volume exists" bound_is "$ns" 3
	check "waits: never partly bound" test $partial = 0
}

case_dynamic() {
	local ns=dyn-$run
	k create namespace "$ns" >/dev/null
	claim "$ns" d-data-0 "hostpath-$run"
	claim "$ns" d-data-1 "hostpath-$run"
	gang "$ns" d 2
	check "dynamic: both claims provisioned and bound" \
		wait_for 60 bash -c "[[ \$(kubectl --kubeconfig '$admin' get pvc -n $ns -o jsonpath='{.items[*].status.phase}') == 'Bound Bound' ]]"
	check "dynamic: both members bound" wait_for 30 bound_is "$ns" 2
	local i ok=1
	for i in 0 1; do
		local sel
		sel=$(k get pvc -n "$ns" "d-data-$i" -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/selected-node}')
		[[ -n $sel && $sel == "$(pod_node "$ns" "d-$i")" ]] || { ok=0; echo "d-$i: selected-node '$sel', pod on '$(pod_node "$ns" "d-$i")'" >&2; }
	done
	check "dynamic: each claim's selected-node is its member's node" test $ok = 1
}

# rwop_volume NS CLAIM: a ReadWriteOncePod volume named NS (a class of the
# same name, hostPath) and the claim NS/CLAIM for it, which the PV
# controller binds.
rwop_volume() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOncePod]
  storageClassName: $1
  hostPath: {path: /tmp/kb-$1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $2, namespace: $1}
spec:
  storageClassName: $1
  accessModes: [ReadWriteOncePod]
  resources: {requests: {storage: 5Gi}}
EOF
}

# rwop_round NS WHO: a ReadWriteOncePod claim (bound by the PV controller)
# wanted by two pods created together: one is bound, the other waits with
# kube-scheduler's reason (VolumeRestrictions) until the first is gone, then
# is bound. WHO names the scheduler in the checks.
rwop_round() {
	local ns=$1 who=$2
	k create namespace "$ns" >/dev/null
	rwop_volume "$ns" only
	check "rwop ($who): the PV controller binds the ReadWriteOncePod claim" wait_for 60 claim_bound "$ns" only
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: one, namespace: $ns}
spec:
  schedulerName: kube-batchd
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: s, persistentVolumeClaim: {claimName: only}}]
---
apiVersion: v1
kind: Pod
metadata: {name: two, namespace: $ns}
spec:
  schedulerName: kube-batchd
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: s, persistentVolumeClaim: {claimName: only}}]
EOF
	check "rwop ($who): one of the two pods is bound" wait_for 20 bound_is "$ns" 1
	sleep 2 # more cycles: the other must stay pending
	check "rwop ($who): ... and only one" bound_is "$ns" 1
	local waiting=two holder=one
	[[ -z $(pod_node "$ns" one) ]] && waiting=one holder=two
	check "rwop ($who): the other waits with kube-scheduler's reason" \
		wait_for 10 bash -c "kubectl --kubeconfig '$admin' get pod -n $ns $waiting -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode'"
	k delete pod -n "$ns" "$holder" --grace-period=0 --force >/dev/null 2>&1
	check "rwop ($who): once the first pod is gone, the other is bound" \
		wait_for 30 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod -n $ns $waiting -o jsonpath='{.spec.nodeName}') ]]"
}

# rwop_preempt_round NS WHO: preempting the holder of a ReadWriteOncePod
# claim. On a node of the round's own, `holder` (priority 100) uses the
# claim and `bystander` (priority 50, no claim) runs beside it; `trainer`
# (priority 1000) needs the claim. Only the holder is evicted (deleted, or
# left terminating: no kubelet here finishes it, so the test removes it as
# a kubelet would), then trainer is bound.
rwop_preempt_round() {
	local ns=$1 who=$2 nd=rp-$1 pc
	k create namespace "$ns" >/dev/null
	node "$nd" 0
	for pc in high:1000 mid:100 low:50; do
		k create -f - >/dev/null <<EOF
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $ns-${pc%%:*}}
value: ${pc##*:}
EOF
	done
	rwop_volume "$ns" model
	check "rwop-preempt ($who): the PV controller binds the claim" wait_for 60 claim_bound "$ns" model
	rp_pod "$ns" holder "$ns-mid" "$nd" model
	rp_pod "$ns" bystander "$ns-low" "$nd" ""
	check "rwop-preempt ($who): the holder and the bystander are bound" \
		wait_for 20 bound_is "$ns" 2
	rp_pod "$ns" trainer "$ns-high" "" model
	check "rwop-preempt ($who): the holder is evicted" \
		wait_for 30 bash -c "[[ -z \$(kubectl --kubeconfig '$admin' get pod -n $ns holder -o name 2>/dev/null) || -n \$(kubectl --kubeconfig '$admin' get pod -n $ns holder -o jsonpath='{.metadata.deletionTimestamp}') ]]"
	k delete pod -n "$ns" holder --grace-period=0 --force >/dev/null 2>&1
	check "rwop-preempt ($who): once it is gone, the pod that needs the claim is bound" \
		wait_for 30 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod -n $ns trainer -o jsonpath='{.spec.nodeName}') ]]"
	check "rwop-preempt ($who): the bystander is left alone" \
		bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod -n $ns bystander -o name) && -z \$(kubectl --kubeconfig '$admin' get pod -n $ns bystander -o jsonpath='{.metadata.deletionTimestamp}') ]]"
}

# rp_pod NS NAME PRIORITYCLASS NODE CLAIM: a pod of 1 cpu (NODE: its
# nodeSelector, or "" for none; CLAIM: its claim, or "" for none).
rp_pod() {
	local sel= vol=
	[[ -n $4 ]] && sel="nodeSelector: {kubernetes.io/hostname: $4}"
	[[ -n $5 ]] && vol="volumes: [{name: m, persistentVolumeClaim: {claimName: $5}}]"
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  schedulerName: kube-batchd
  priorityClassName: $3
  $sel
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  $vol
EOF
}

# capacity_round NS WHO: storage capacity (kube-scheduler's VolumeBinding
# with CSIStorageCapacity). A CSI driver of the round's own publishes
# capacity (CSIDriver storageCapacity: true): 1Gi on the round's node a,
# 20Gi on its node b, none elsewhere. A claim of 5Gi is given node b
# (volume.kubernetes.io/selected-node: no provisioner runs here, so it goes
# no further); one of 50Gi fits no node and its pod waits with
# kube-scheduler's reason, its claim given no node.
capacity_round() {
	local ns=$1 who=$2 drv=$1.cap.example.com z
	k create namespace "$ns" >/dev/null
	for z in a b; do
		k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $ns-$z, labels: {kubernetes.io/hostname: $ns-$z, kb-test/zone: $ns-$z}}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF
	done
	k create -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $drv}
spec: {storageCapacity: true, attachRequired: false}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $ns}
provisioner: $drv
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-a, namespace: $ns}
storageClassName: $ns
nodeTopology: {matchLabels: {kb-test/zone: $ns-a}}
capacity: 1Gi
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-b, namespace: $ns}
storageClassName: $ns
nodeTopology: {matchLabels: {kb-test/zone: $ns-b}}
capacity: 20Gi
EOF
	local c size
	for c in fits:5Gi big:50Gi; do
		size=${c##*:} c=${c%%:*}
		k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $c, namespace: $ns}
spec:
  storageClassName: $ns
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: $size}}
---
apiVersion: v1
kind: Pod
metadata: {name: $c, namespace: $ns}
spec:
  schedulerName: kube-batchd
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: $c}}]
EOF
	done
	check "capacity ($who): the claim that fits is given the node with room" \
		wait_for 30 bash -c "[[ \$(kubectl --kubeconfig '$admin' get pvc -n $ns fits -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/selected-node}') == $ns-b ]]"
	check "capacity ($who): the claim too big for every node waits with kube-scheduler's reason" \
		wait_for 20 bash -c "kubectl --kubeconfig '$admin' get pod -n $ns big -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'did not have enough free storage'"
	check "capacity ($who): ... given no node, its pod not bound" \
		bash -c "[[ -z \$(kubectl --kubeconfig '$admin' get pvc -n $ns big -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/selected-node}') && -z \$(kubectl --kubeconfig '$admin' get pod -n $ns big -o jsonpath='{.spec.nodeName}') ]]"
}

# csi_round NS WHO: CSI volume limits (kube-scheduler's NodeVolumeLimits) on
# a node of its own, whose CSINode lets it attach 2 volumes of a driver of
# its own. Three volumes of that driver, bound by the PV controller to
# claims c0..c2; a VolumeAttachment holds v0 there. p1 (c1) is bound; then
# p2 (c2) and p3 (c1 again) are made together: p2 would be a third volume
# and waits with kube-scheduler's reason, p3 shares p1's volume and is
# bound. p1 goes: p3 still holds v1, p2 still waits. The VolumeAttachment
# goes: p2 is bound.
csi_round() {
	local ns=$1 who=$2 drv=$1.csi.example.com nd=csi-$1 i
	k create namespace "$ns" >/dev/null
	node "$nd" 0
	k create -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: $nd}
spec:
  drivers: [{name: $drv, nodeID: $nd, allocatable: {count: 2}}]
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: $ns-v0}
spec:
  attacher: $drv
  nodeName: $nd
  source: {persistentVolumeName: $ns-v0}
EOF
	for i in 0 1 2; do
		k create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $ns-v$i}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteMany]
  storageClassName: $ns
  csi: {driver: $drv, volumeHandle: handle-$i}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c$i, namespace: $ns}
spec:
  storageClassName: $ns
  volumeName: $ns-v$i
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 5Gi}}
EOF
	done
	check "csi ($who): the PV controller binds the three claims" \
		wait_for 60 bash -c "for c in c0 c1 c2; do [[ \$(kubectl --kubeconfig '$admin' get pvc -n $ns \$c -o jsonpath='{.status.phase}') == Bound ]] || exit 1; done"
	csi_pod "$ns" "$nd" p1 c1
	check "csi ($who): a pod with a second volume of the driver is bound" \
		wait_for 20 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod -n $ns p1 -o jsonpath='{.spec.nodeName}') ]]"
	csi_pod "$ns" "$nd" p2 c2
	csi_pod "$ns" "$nd" p3 c1
	check "csi ($who): a pod sharing a volume in use there is bound" \
		wait_for 20 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod -n $ns p3 -o jsonpath='{.spec.nodeName}') ]]"
	check "csi ($who): a pod with a third volume waits with kube-scheduler's reason" \
		wait_for 20 bash -c "kubectl --kubeconfig '$admin' get pod -n $ns p2 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'exceed max volume count'"
	k delete pod -n "$ns" p1 --grace-period=0 --force >/dev/null 2>&1
	sleep 3 # more cycles: p3 still holds the volume, so p2 must stay pending
	check "csi ($who): ... and still waits while another pod holds that volume" \
		bash -c "[[ -z \$(kubectl --kubeconfig '$admin' get pod -n $ns p2 -o jsonpath='{.spec.nodeName}') ]]"
	k delete volumeattachment "$ns-v0" >/dev/null
	check "csi ($who): once the VolumeAttachment goes, it is bound" \
		wait_for 30 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pod -n $ns p2 -o jsonpath='{.spec.nodeName}') ]]"
}

# csi_pod NS NODE NAME CLAIM: a pod on NODE (nodeSelector) using CLAIM.
csi_pod() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $3, namespace: $1}
spec:
  schedulerName: kube-batchd
  nodeSelector: {kubernetes.io/hostname: $2}
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: s, persistentVolumeClaim: {claimName: $4}}]
EOF
}

# by_kube_scheduler ROUND NS: ROUND NS kube-scheduler, with upstream
# kube-scheduler (built from tests/cluster's pinned module, as twin.sh
# builds it; one profile named kube-batchd) in kube-batchd's stead, which
# is started again after.
by_kube_scheduler() {
	local round=$1 ns=$2
	local kbin=${KB_CLUSTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-batchd/cluster-bin}
	if ! (. "$root/tests/cluster/lib.sh" && kb_build_kube_scheduler "$kbin") >"$dir/kube-scheduler-build.log" 2>&1; then
		fail "$round: kube-scheduler builds from tests/cluster's module (log $dir/kube-scheduler-build.log)"
		return
	fi
	stop_sched
	local ks_port ks_pid
	e2e_free_port ks_port || { fail "$round: a free port for kube-scheduler"; start_daemon; return; }
	cat >"$dir/kube-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$admin"}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: kube-batchd
EOF
	"$kbin/kube-scheduler" --config "$dir/kube-scheduler.yaml" --bind-address 127.0.0.1 \
		--secure-port "$ks_port" -v 2 >>"$dir/kube-scheduler.log" 2>&1 &
	ks_pid=$!
	if e2e_wait_healthy "$ks_port" "$ks_pid" "$dir/kube-scheduler.log" https; then
		"$round" "$ns" kube-scheduler
	else
		fail "$round: kube-scheduler becomes healthy"
	fi
	kill "$ks_pid" 2>/dev/null
	wait "$ks_pid" 2>/dev/null
	start_daemon || fail "$round: kube-batchd starts again"
}

# Each round by kube-batchd, then by upstream kube-scheduler, whose rule it
# is: both must agree.
case_rwop() {
	rwop_round "rwop-$run" kube-batchd
	by_kube_scheduler rwop_round "rwop-ks-$run"
}

case_rwop-preempt() {
	rwop_preempt_round "rp-$run" kube-batchd
	by_kube_scheduler rwop_preempt_round "rp-ks-$run"
}

case_capacity() {
	capacity_round "cap-$run" kube-batchd
	by_kube_scheduler capacity_round "cap-ks-$run"
}

case_csi() {
	csi_round "csi-$run" kube-batchd
	by_kube_scheduler csi_round "csi-ks-$run"
}

for c in "${cases[@]}"; do
	declare -F "case_$c" >/dev/null || { fail "unknown case $c"; continue; }
	"case_$c"
done
k get nodes -o json >"$dir/nodes.json" && k get pods -A -o json >"$dir/pods.json" &&
	check "no node over its allocatable (the kubelet's rule)" e2e_invariants "$dir/nodes.json" "$dir/pods.json"
if ((fails)); then
	echo "--- scheduler log (last 40 lines) ---"
	tail -40 "$log"
fi
e2e_summary
((fails == 0))

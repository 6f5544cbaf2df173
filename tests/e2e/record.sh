#!/usr/bin/env bash
# End-to-end: `kube-batchd --record FILE` against the local control plane,
# then `kube-batchd replay FILE`.
#
#   tests/e2e/record.sh [--build BUILDDIR] [--keep]
#
# The daemon runs with its restricted credentials, a queue file (two queues
# mapped by namespace) and --record, on: a gang of four low-priority pods
# (minMember 1) filling two nodes, then a high-priority gang of two
# (minMember 2) that preempts two of them; and a pod whose namespace is
# being deleted, whose binding the API refuses (NamespaceLifecycle: 403),
# so that the writers hold it back (the store's own state, recorded). Then:
#   - replay says "N sessions, M decisions, all identical" and exits 0;
#   - a copy with one bind's node changed: replay names that session and
#     the byte offset of the changed line, and exits 1;
#   - a copy with one session's pending-reason digest changed: replay says
#     the pending reasons of that session differ;
#   - a copy with one pending pod's recorded reason edited: replay names
#     the pod, the recorded reason and its own; a copy without a "gone"
#     report line: replay names the report it did not make;
#   - a copy cut inside its last line: refused, naming the offset of that
#     line; a copy of another format: refused at offset 0.
# With KUBE_BATCHD from an ASan build (meson's e2e suite in build-asan),
# the daemon and the replay run under the sanitizers.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=record e2e_help_end=25
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fixtures=$here/fixtures
e2e_args "$@"
e2e_need kubectl curl openssl flock setsid
[[ -x $root/tests/cluster/up ]] || { echo "record: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-record
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

"$root/tests/cluster/up" "$dir" >"$dir.up.log" 2>&1 ||
	{ cat "$dir.up.log" >&2; echo "FAIL: control plane did not start"; exit 1; }
rm -f "$dir.up.log"
admin=$dir/admin.kubeconfig
schedcfg=$dir/scheduler.kubeconfig
k() { kubectl --kubeconfig "$admin" "$@"; }
e2e_free_port || { fail "a free port"; exit 1; }
run=$(printf '%04x' $((RANDOM % 65536)))
low=low-$run high=high-$run gone=gone-$run
rec=$dir/record.jsonl

node() {
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1}}
status:
  capacity: {cpu: "2", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "2", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True", reason: KubeletReady, message: ok, lastHeartbeatTime: "2024-01-01T00:00:00Z", lastTransitionTime: "2024-01-01T00:00:00Z"}]
EOF
}
# gang NS NAME SIZE MINMEMBER [PRIORITYCLASS]
gang() {
	local i pc=
	[[ -n ${5:-} ]] && pc="priorityClassName: $5"
	printf -- '---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s, namespace: %s}\nspec: {minMember: %s}\n' "$2" "$1" "$4"
	for ((i = 0; i < $3; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $1, annotations: {scheduling.k8s.io/group-name: $2}}
spec:
  schedulerName: kube-batchd
  $pc
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]
EOF
	done
}
bound_count() { k get pods -n "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }

node "rec-a-$run"
node "rec-b-$run"
k create namespace "$low" >/dev/null
k create namespace "$high" >/dev/null
k create namespace "$gone" >/dev/null
k apply -f - >/dev/null <<EOF
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: rec-high-$run}
value: 1000
EOF
# One queue for the three namespaces, so that the evictions are preemption
# by priority (not reclaim between queues); a second, empty one.
printf '%s\n' "queues:" "- name: batch" "  weight: 1" "  namespaces: [$low, $high, $gone]" \
	"- name: spare" "  weight: 1" >"$dir/queues.yaml"
# The pod whose binding the API refuses: its namespace is being deleted
# (nothing finishes that here: no namespace controller).
gang "$gone" lone 1 1 | k create -f - >/dev/null
k delete namespace "$gone" --wait=false >/dev/null
gang "$low" train 4 1 | k create -f - >/dev/null

log=$dir/scheduler.log
"$bin" --kubeconfig "$schedcfg" --listen-address "127.0.0.1:$port" --schedule-period 200ms -v 2 \
	--scheduler-conf "$fixtures/scheduler.conf" --queue-conf "$dir/queues.yaml" \
	--record "$rec" >"$log" 2>&1 &
sched_pid=$!
e2e_wait_healthy "$port" "$sched_pid" "$log" || { fail "the daemon becomes healthy"; exit 1; }

check "the low gang is bound (4 pods)" wait_for 30 bash -c "(( \$(kubectl --kubeconfig '$admin' get pods -n '$low' -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) == 4 ))"
for i in 0 1 2 3; do
	k patch pod "train-$i" -n "$low" --subresource=status --type=merge \
		-p '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
done
check "the refused binding is logged (403, namespace being deleted)" \
	wait_for 20 grep -q "being terminated" "$log"
gang "$high" urgent 2 2 "rec-high-$run" | k create -f - >/dev/null
# Victims stay Terminating without a kubelet: finish them as a kubelet would.
evicted=0
for ((i = 0; i < 150; i++)); do
	for p in $(k get pods -n "$low" -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}'); do
		k delete pod "$p" -n "$low" --grace-period=0 --force >/dev/null 2>&1 && evicted=$((evicted + 1))
	done
	(($(bound_count "$high") == 2)) && break
	sleep 0.2
done
check "the high gang preempts two low pods and is bound (evicted $evicted)" \
	bash -c "(( $(bound_count "$high") == 2 && $evicted == 2 ))"
sleep 1
kill -TERM "$sched_pid"
wait "$sched_pid"
rc=$?
sched_pid=
check "the daemon stops cleanly (exit $rc)" test "$rc" = 0

check "the record has the header, the configuration and the queue file" \
	bash -c "head -1 '$rec' | grep -q '\"magic\":\"kube-batchd-record\"' && grep -q '^{\"r\":\"conf\"' '$rec' && grep -q '^{\"r\":\"queues\".*\"ok\":true' '$rec'"
check "the record has binds, and the two evictions naming the high gang" \
	bash -c "grep -q '^{\"r\":\"bind\"' '$rec' && (( \$(grep -c '^{\"r\":\"evict\"' '$rec') == 2 && \$(grep -c '^{\"r\":\"evict\".*\"reason\":\"[^\"]*$high/urgent' '$rec') == 2 ))"
check "the record has the refused pod held back (the store's own state)" \
	grep -q "\"key\":\"$gone/lone-0\",[^}]*\"held\":true" "$rec"

out=$("$bin" replay "$rec" 2>&1)
rc=$?
echo "replay: $out"
check "replay: all identical, exit 0" \
	bash -c "[[ $rc == 0 && '$out' =~ ^[0-9]+\ sessions,\ [0-9]+\ decisions,\ all\ identical$ ]]"

# replay_of LABEL FILE: replays FILE into $out and $rc, and shows what it
# said; field_of LINE NAME: a field of the record's line LINE, as JSON reads it.
replay_of() {
	out=$("$bin" replay "$2" 2>&1)
	rc=$?
	echo "replay ($1): $out"
}
field_of() { sed -n "${1}p" "$rec" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }

# One bind's node changed: the first bind of the high gang.
line=$(grep -n "^{\"r\":\"bind\",\"n\":[0-9]*,\"pod\":\"$high/" "$rec" | head -1 | cut -d: -f1)
offset=$(($(head -n $((line - 1)) "$rec" | wc -c)))
session=$(field_of "$line" n)
sed "${line}s/\"node\":\"[^\"]*\"/\"node\":\"no-such-node\"/" "$rec" >"$dir/edited.jsonl"
replay_of "edited" "$dir/edited.jsonl"
check "replay of an edited bind: exit 1, session $session, offset $offset, expected and got" \
	bash -c "[[ $rc == 1 ]] && grep -q 'session $session (offset $offset, line $line): the decision differs' <<<'$out' && grep -q 'expected: .*no-such-node' <<<'$out' && grep -q 'got: .*\"node\":\"rec-' <<<'$out'"

# One session's pending reasons recorded otherwise (its end record's
# pending digest changed): replay names that kind of report.
line=$(grep -n '^{"r":"end",.*"pending_reports":[1-9]' "$rec" | head -1 | cut -d: -f1)
session=$(field_of "$line" n)
sed "${line}s/\"pending_digest\":\"[0-9a-f]*\"/\"pending_digest\":\"0000000000000000\"/" "$rec" >"$dir/reports.jsonl"
replay_of "a pending digest changed" "$dir/reports.jsonl"
check "replay of a changed pending digest: exit 1, session $session, the pending reasons differ" \
	bash -c "[[ -n '$line' && $rc == 1 ]] && grep -q 'session $session (offset [0-9]*, line $line): the pending reasons differ' <<<'$out'"

# One report recorded otherwise (a pending pod's reason edited): replay
# names the pod, the recorded text and its own.
check "the record has reports by name: a pending reason, and one gone" \
	bash -c "grep -q '^{\"r\":\"report\",\"n\":[0-9]*,\"kind\":\"pending\",\"key\":\"[^\"]*\",\"text\":' '$rec' && grep -q '^{\"r\":\"report\",.*\"gone\":true}' '$rec'"
line=$(grep -n '^{"r":"report","n":[0-9]*,"kind":"pending",' "$rec" | head -1 | cut -d: -f1)
pod=$(field_of "$line" key)
session=$(field_of "$line" n)
reason=$(field_of "$line" text)
sed -E "${line}s/\"text\":\"([^\"\\\\]|\\\\.)*\"/\"text\":\"an edited reason\"/" "$rec" >"$dir/reason.jsonl"
replay_of "a pending reason edited" "$dir/reason.jsonl"
named=no
[[ -n $line && $rc == 1 ]] && grep -qF "session $session (offset" <<<"$out" &&
	grep -qF "line $line): the pending reason of pod \"$pod\" differs" <<<"$out" &&
	grep -qF "expected: an edited reason" <<<"$out" && grep -qxF "  got:      $reason" <<<"$out" && named=yes
check "replay of an edited pending reason: exit 1, session $session, line $line, the pod named, both texts" \
	test "$named" = yes
# A "gone" line dropped: the record says the report was still made, the
# replay does not make it.
line=$(grep -n '^{"r":"report",.*"gone":true}' "$rec" | head -1 | cut -d: -f1)
key=$(field_of "$line" key)
sed "${line}d" "$rec" >"$dir/gone.jsonl"
replay_of "a gone line dropped" "$dir/gone.jsonl"
check "replay without a gone line: exit 1, names \"$key\" as a report the replay did not make" \
	bash -c "[[ -n '$line' && $rc == 1 ]] && grep -qF '\"$key\": a report the replay did not make' <<<'$out'"

size=$(wc -c <"$rec")
lastoff=$((size - $(tail -n 1 "$rec" | wc -c)))
head -c $((size - 5)) "$rec" >"$dir/cut.jsonl"
replay_of "cut" "$dir/cut.jsonl"
check "replay of a cut file: refused at offset $lastoff, exit 1" \
	bash -c "[[ $rc == 1 ]] && grep -q 'offset $lastoff (line [0-9]*): truncated' <<<'$out'"
sed -E '1s/"format":[0-9]+/"format":7/' "$rec" >"$dir/v7.jsonl"
replay_of "format 7" "$dir/v7.jsonl"
check "replay of another format: refused at offset 0, exit 1" \
	bash -c "[[ $rc == 1 ]] && grep -q 'offset 0 (line 1): header: record format 7' <<<'$out'"

# A restart keeps the record it would overwrite (the run before it is the
# one a bug report wants) as FILE.1.
cp "$rec" "$dir/first.jsonl"
"$bin" --kubeconfig "$schedcfg" --listen-address "127.0.0.1:$port" --schedule-period 200ms -v 2 \
	--scheduler-conf "$fixtures/scheduler.conf" --queue-conf "$dir/queues.yaml" \
	--record "$rec" >"$log.2" 2>&1 &
sched_pid=$!
e2e_wait_healthy "$port" "$sched_pid" "$log.2" || fail "the daemon restarts with the same --record"
sleep 1
stop_sched
check "a restart keeps the previous record as FILE.1, unchanged, and starts FILE anew" \
	bash -c "cmp -s '$dir/first.jsonl' '$rec.1' && head -1 '$rec' | grep -q '\"magic\":\"kube-batchd-record\"' && ! cmp -s '$rec' '$rec.1'"
out=$("$bin" replay "$rec.1" 2>&1)
check "replay of FILE.1: all identical ($out)" grep -q 'all identical' <<<"$out"

e2e_summary
((fails == 0))

#!/bin/sh
# check-config: exit 0 and the queue tree with deserved shares for valid
# files; exit 1 and file:line:col with what is wrong for broken ones; exit 2
# for usage errors.
#   run.sh PATH/TO/kube-batchd
set -u
KB=${1:?usage: run.sh PATH/TO/kube-batchd}
D=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp)
ERR=$(mktemp)
trap 'rm -f "$OUT" "$ERR"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	echo "--- stdout:"; cat "$OUT"
	echo "--- stderr:"; cat "$ERR"
	failures=$((failures + 1))
}

# expect STATUS DESCRIPTION -- ARGS...: runs check-config, checks the status.
expect() {
	want=$1; what=$2; shift 3
	"$KB" check-config "$@" >"$OUT" 2>"$ERR"
	got=$?
	[ "$got" -eq "$want" ] || fail "$what: exit $got, expected $want"
}

# has FILE TEXT: FILE (out or err) must contain TEXT literally.
has() {
	f=$OUT; [ "$1" = err ] && f=$ERR
	grep -qF -- "$2" "$f" || fail "expected in std$1: $2"
}

# A line of the queue table: the queue (with its tree indentation), then the given cells.
row() {
	grep -qE -- "$1" "$OUT" || fail "expected a table row matching: $1"
}

# ---- valid: the full report -----------------------------------------------------------
expect 0 "valid files" -- --queue-conf "$D/queues.yaml" --scheduler-conf "$D/scheduler.yaml" -f "$D/cluster.yaml"
has out "queues.yaml: valid; 3 queues, 3 namespaces mapped"
has out "scheduler.yaml: valid; actions: enqueue, allocate, backfill"
has out "4 nodes (4 schedulable), allocatable cpu: 64, memory: 256Gi, nvidia.com/gpu: 16"
has out "guarantees: cpu: 8, nvidia.com/gpu: 4 in all"
has out "DESERVED"
# 64 cpu over weights org 1, research 3, prod 1, batch 2 (capped at 8 cpu), default 1;
# 16 GPUs over the same weights, research raised to its guarantee of 4 is below 3/8 of 16.
row '^org +file +1 +yes +Open +- +- +cpu: 9334m, memory: 32Gi, nvidia.com/gpu: 2 +-$'
row '^  research +file +3 +yes +Open +nvidia.com/gpu: 12 +cpu: 8, nvidia.com/gpu: 4 +cpu: 27999m, memory: 96Gi, nvidia.com/gpu: 6 +ml, vision$'
row '^  prod +file +1 +no +Open +- +- +cpu: 9333m, memory: 32Gi, nvidia.com/gpu: 2 +web$'
row '^batch +Queue object +2 +yes +Open +cpu: 8 +- +cpu: 8, memory: 64Gi, nvidia.com/gpu: 4 +-$'
row '^default +implicit +1 +yes +Open +- +- +cpu: 9334m, memory: 32Gi, nvidia.com/gpu: 2 +-$'
has out 'PodGroup "ml/lost": queue "nowhere" not found'
[ "$(tail -n 1 "$OUT")" = valid ] || fail "the report must end with \"valid\""
# The Queue object "prod" (weight 100) loses to the file's prod: no row of weight 100.
grep -qE '^ *prod +.* 100 ' "$OUT" && fail "the file's prod must win over the Queue object"
# Deterministic: the same input prints the same bytes.
cp "$OUT" "$OUT.1"
"$KB" check-config --queue-conf "$D/queues.yaml" --scheduler-conf "$D/scheduler.yaml" -f "$D/cluster.yaml" >"$OUT" 2>"$ERR"
cmp -s "$OUT" "$OUT.1" || fail "two runs printed different output"
rm -f "$OUT.1"

# Without a cluster: the tree, no deserved shares, and why.
expect 0 "queue file alone" -- --queue-conf "$D/queues.yaml"
has out "no deserved shares: they need a cluster, give one with -f CLUSTER.yaml"
row '^  research +file +3 +yes +Open +nvidia.com/gpu: 12 +cpu: 8, nvidia.com/gpu: 4 +ml, vision$'
grep -q DESERVED "$OUT" && fail "no DESERVED column without a cluster"

# A scheduler configuration without proportion is valid, with a warning.
expect 0 "scheduler conf without proportion" -- --scheduler-conf "$D/scheduler-no-proportion.yaml" -f "$D/cluster.yaml"
has out "no proportion plugin"

# ---- invalid: exit 1, file:line:col and what is wrong ----------------------------------
expect 1 "unknown key" -- --queue-conf "$D/bad-unknown-key.yaml"
has err 'bad-unknown-key.yaml:4:3: queue "research": unknown key "capacity"'
expect 1 "bad quantity" -- --queue-conf "$D/bad-quantity.yaml"
has err 'bad-quantity.yaml:4:10: queue "research": capability.cpu: bad quantity "8 cores"'
expect 1 "duplicate name" -- --queue-conf "$D/bad-duplicate.yaml"
has err 'bad-duplicate.yaml:4:3: duplicate queue name "research"'
expect 1 "guarantee above capability" -- --queue-conf "$D/bad-guarantee-above-capability.yaml"
has err 'bad-guarantee-above-capability.yaml:4:31: queue "research": guarantee of nvidia.com/gpu (6) is above its capability (4)'
expect 1 "weight 0" -- --queue-conf "$D/bad-weight.yaml"
has err 'bad-weight.yaml:3:11: queue "research": weight must be a whole number >= 1'
expect 1 "namespace twice" -- --queue-conf "$D/bad-namespace-twice.yaml"
has err 'bad-namespace-twice.yaml:5:21: namespace "ml" is mapped to queue "research" and to queue "prod"'
expect 1 "parent cycle" -- --queue-conf "$D/bad-parent-cycle.yaml"
has err 'bad-parent-cycle.yaml:3:11: queue "a": its parents form a cycle'
expect 1 "guarantees above the cluster" -- --queue-conf "$D/bad-guarantees-above-cluster.yaml" -f "$D/cluster.yaml"
has err 'bad-guarantees-above-cluster.yaml:5:3: queue "prod": the guarantees of cpu sum to 70, above the cluster'"'"'s allocatable 64'
# ... which only a cluster can tell: alone the file is valid.
expect 0 "guarantees without a cluster" -- --queue-conf "$D/bad-guarantees-above-cluster.yaml"
expect 1 "bad scheduler configuration" -- --scheduler-conf "$D/bad-scheduler.yaml" --queue-conf "$D/queues.yaml"
has err 'bad-scheduler.yaml:1:10: unknown action "allocat"'
expect 1 "bad cluster manifest" -- --queue-conf "$D/queues.yaml" -f "$D/bad-node.yaml"
has err 'bad-node.yaml:4:29'
expect 1 "missing file" -- --queue-conf "$D/does-not-exist.yaml"
has err "does-not-exist.yaml"
[ -s "$OUT" ] && fail "nothing may be printed to stdout for an invalid file"

# ---- usage: exit 2 -----------------------------------------------------------------------
expect 2 "nothing to check" --
expect 2 "unknown option" -- --bogus
expect 2 "stray argument" -- --queue-conf "$D/queues.yaml" extra

if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "check-config: all checks passed"

# Shared helpers of tests/cluster/up, down and smoke-test. Sourced, not run.
# shellcheck shell=bash

KB_CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KB_REPO_ROOT=$(cd "$KB_CLUSTER_DIR/../.." && pwd)
KB_MARKER=.kube-batchd-cluster   # present in every DIR that up has set up

# kubectl and (when scripts/setup installed one) go first on PATH.
source "$KB_CLUSTER_DIR/path.sh"

kb_prog=$(basename "$0")
kb_die() { echo "$kb_prog: error: $*" >&2; exit 1; }
kb_log() { echo "$kb_prog: $*" >&2; }

# The process start time (field 22 of /proc/PID/stat), so that a PID the
# kernel has since reused for something else is never signalled.
kb_starttime() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }            # drop "pid (comm) ", comm may hold spaces
	set -- $stat
	echo "${20}"
}

# kb_record_pid DIR NAME PID: remember a process started from DIR.
kb_record_pid() {
	local st
	st=$(kb_starttime "$3") || st=0
	mkdir -p "$1/run"
	echo "$3 $st" >"$1/run/$2.pid"
}

# kb_pid_alive DIR NAME: print the PID and succeed if NAME started from DIR
# is still running (same PID, same start time, not a zombie).
kb_pid_alive() {
	local f="$1/run/$2.pid" pid st now state
	[[ -r $f ]] || return 1
	read -r pid st <"$f" || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	now=$(kb_starttime "$pid") || return 1
	[[ $now == "$st" ]] || return 1 # 0: it had exited before it was recorded
	state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
	[[ $state != Z ]] || return 1
	echo "$pid"
}

# kb_stop DIR NAME [TIMEOUT]: TERM, wait, then KILL one recorded process.
kb_stop() {
	local dir=$1 name=$2 timeout=${3:-${KB_CLUSTER_STOP_TIMEOUT:-15}} pid i
	if pid=$(kb_pid_alive "$dir" "$name"); then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < timeout * 10; i++)); do
			kb_pid_alive "$dir" "$name" >/dev/null || break
			sleep 0.1
		done
		if kb_pid_alive "$dir" "$name" >/dev/null; then
			kb_log "$name (pid $pid) still running after ${timeout}s, sending KILL"
			kill -KILL "$pid" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				kb_pid_alive "$dir" "$name" >/dev/null || break
				sleep 0.1
			done
		fi
		if kb_pid_alive "$dir" "$name" >/dev/null; then
			kb_log "could not stop $name (pid $pid)"
			return 1
		fi
	fi
	rm -f "$dir/run/$name.pid"
}

# All processes of the local control plane, in the order up starts them.
KB_PROCS=(etcd kube-apiserver kube-controller-manager kwok)

# kb_build_module BIN NAME MODULE-DIR OUTPUTS LDFLAGS PACKAGES...: go build
# PACKAGES of the Go module in MODULE-DIR into BIN unless the stamp
# BIN/NAME.stamp says the OUTPUTS are up to date. The stamp is a SHA-256 of
# `go version`, the flags and the module's *.go, go.mod and go.sum (the
# nested kwok/ and next/ modules excluded); a flock keeps parallel builds apart.
# KB_CLUSTER_BUILD_FLAGS adds go build flags (e.g. "-p 1"). Used by
# tests/cluster/up and tests/operators/build.
kb_build_module() {
	local bin=$1 name=$2 mdir=$3 outputs=$4 ldflags=$5 stamp hash out tmp start
	shift 5
	hash=$( {
		go version
		echo "$ldflags ${KB_CLUSTER_BUILD_FLAGS:-} $*"
		cd "$mdir"
		find . \( \( -name kwok -o -name next \) -prune -a ! -path . \) -o \( -name '*.go' -o -name go.mod -o -name go.sum \) -print |
			LC_ALL=C sort | xargs sha256sum
	} | sha256sum | cut -c1-64)
	stamp=$bin/$name.stamp
	exec 9>"$bin/.$name.lock"
	flock 9
	local missing=0
	for out in $outputs; do [[ -x $bin/$out ]] || missing=1; done
	if ((!missing)) && [[ -f $stamp && $(cat "$stamp") == "$hash" ]]; then
		exec 9>&-
		return 0
	fi
	kb_log "building $name ($*) into $bin; the first build takes several minutes"
	tmp=$(mktemp -d "$bin/.build.XXXXXX")
	start=$SECONDS
	# shellcheck disable=SC2086
	if ! (cd "$mdir" && go build -mod=readonly -trimpath -ldflags="$ldflags" ${KB_CLUSTER_BUILD_FLAGS:-} -o "$tmp/" "$@") \
		>"$tmp/build.log" 2>&1; then
		cat "$tmp/build.log" >&2
		rm -rf "$tmp"
		kb_die "building $name failed (module $mdir)"
	fi
	for out in $outputs; do mv -f "$tmp/$out" "$bin/$out"; done
	rm -rf "$tmp"
	echo "$hash" >"$stamp"
	kb_log "built $name in $((SECONDS - start))s"
	exec 9>&-
}

# kb_lease_rbac NS NAME: print deploy/rbac.yaml's leader-election Role and
# RoleBinding for the Lease NS/NAME instead of kube-system/kube-batchd, bound
# to the local control plane's scheduler user: what an admin does when the
# Deployment's flags put the Lease elsewhere (deploy/README.md).
kb_lease_rbac() {
	awk -v ns="$1" -v name="$2" '
		function flush() { if (doc ~ /\nkind: Role(Binding)?\n/) printf "---%s\n", doc; doc = "" }
		/^---/ { flush(); subj = 0; next }
		subj { next }
		/^subjects:/ {
			doc = doc "\nsubjects:\n- kind: User\n  apiGroup: rbac.authorization.k8s.io\n  name: kube-batchd-scheduler"
			subj = 1; next
		}
		/^  namespace: kube-system$/ { $0 = "  namespace: " ns }
		/^  resourceNames: \[kube-batchd\]$/ { $0 = "  resourceNames: [" name "]" }
		{ doc = doc "\n" $0 }
		END { flush() }
	' "$KB_REPO_ROOT/deploy/rbac.yaml"
}

# kb_k8s_version MODULE-DIR: the k8s.io/kubernetes version its go.mod pins.
kb_k8s_version() {
	local v
	v=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$1/go.mod")
	[[ -n $v ]] || kb_die "cannot find the k8s.io/kubernetes version in $1/go.mod"
	echo "$v"
}

# kb_version_ldflags VERSION: the -X flags that make the binaries of
# k8s.io/kubernetes report VERSION (component-base's version package, which
# the servers and `kubectl version` print).
kb_version_ldflags() {
	local minor=${1#v1.}
	minor=${minor%%.*}
	echo "-s -w -X k8s.io/component-base/version.gitVersion=$1" \
		"-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
		"-X k8s.io/component-base/version.gitTreeState=clean"
}

# kb_build_kube_scheduler BIN: upstream kube-scheduler of this folder's
# module (v1.33, tests/cluster/cmd/kube-scheduler) into BIN, stamp and lock
# as kb_build_module: the counterpart of twin.sh, volumes.sh, bench/run's
# peers step and prebuild.
kb_build_kube_scheduler() {
	kb_build_module "$1" kube-scheduler "$KB_CLUSTER_DIR" kube-scheduler "-s -w" ./cmd/kube-scheduler
}

# kb_build_kubectl: kubectl (k8s.io/kubernetes/cmd/kubectl) of this folder's
# module, the same k8s.io/kubernetes as kube-apiserver's, into KB_TOOLS_BIN
# (path.sh), which is first on PATH of every script sourcing this file. Its
# own stamp there (kb_build_module): nothing runs when it is up to date; the
# first build takes a few minutes, a rebuild after a Go or module change
# mostly links (the Go build cache). Exits through kb_die when it fails.
kb_build_kubectl() {
	mkdir -p "$KB_TOOLS_BIN" || kb_die "cannot create $KB_TOOLS_BIN"
	local v
	v=$(kb_k8s_version "$KB_CLUSTER_DIR") || exit 1
	# client-go's copy of the version goes into kubectl's User-Agent.
	kb_build_module "$KB_TOOLS_BIN" kubectl "$KB_CLUSTER_DIR" kubectl \
		"$(kb_version_ldflags "$v") -X k8s.io/client-go/pkg/version.gitVersion=$v" \
		k8s.io/kubernetes/cmd/kubectl
}

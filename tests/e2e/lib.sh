# tests/e2e/lib.sh - what the end-to-end scripts share. Source it after
# setting e2e_name (the script's short name, for messages) and
# e2e_help_end (the last line of the script's header comment, for --help):
#
#   e2e_name=twin e2e_help_end=25
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   e2e_args "$@"                 # --build DIR, --keep, the rest in e2e_cases
#   e2e_need kubectl curl ...     # exit 77 (skip) when a tool is missing
#   e2e_binary                    # $bin: KUBE_BATCHD or BUILD/cmd/kube-batchd
#   e2e_dir kb-twin               # $dir: KB_E2E_DIR or a fresh temp dir
#   e2e_free_port [VAR]           # $port (or $VAR): one nothing listens on (127.0.0.1)
#   e2e_wait_healthy PORT PID LOG # the daemon's /healthz says ok
#   ... pass / fail / skip / check "what" COMMAND... ...
#   e2e_release_dir               # in the EXIT trap: the control plane down
#   e2e_invariants NODES.json PODS.json  # no node over allocatable (gpu_check.py)
#   e2e_lease_rbac NS NAME        # deploy/rbac.yaml's lease Role, for Lease NS/NAME
#   e2e_watch_invariants          # after up: e2e_invariants every 2 s in the background,
#                                 # checked by e2e_summary (e2e_invariants_checked)
#   stop_sched, wait_for SECONDS CMD...   # the daemon in $sched_pid stopped; polling
#   e2e_summary                   # "NAME: N passed, N failed[, N skipped]"
#
# Variables it sets: here, root, build, keep, e2e_cases, bin, dir, own_dir,
# passes, fails, skips, port.

here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# The kubectl of the control plane's version (scripts/setup, up) first on PATH.
source "$root/tests/cluster/path.sh"
build=$root/build
keep=0
e2e_cases=()
passes=0 fails=0 skips=0

pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

e2e_args() {
	while (($#)); do
		case $1 in
		--build) build=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		-h | --help) sed -n "2,${e2e_help_end}p" "$0"; exit 0 ;;
		*) e2e_cases+=("$1"); shift ;;
		esac
	done
}

e2e_need() {
	local tool
	for tool; do
		command -v "$tool" >/dev/null || { echo "$e2e_name: SKIP: $tool not found" >&2; exit 77; }
	done
}

e2e_binary() {
	bin=${KUBE_BATCHD:-$build/cmd/kube-batchd}
	[[ -x $bin ]] || { echo "$e2e_name: no binary at $bin (build first, or set KUBE_BATCHD)" >&2; exit 2; }
}

# stop_sched: the daemon started into $sched_pid stopped (TERM) and waited
# for; nothing when none runs. A script that needs more defines its own
# after sourcing this file.
stop_sched() {
	[[ -n ${sched_pid:-} ]] || return 0
	kill -TERM "$sched_pid" 2>/dev/null
	wait "$sched_pid" 2>/dev/null
	sched_pid=
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds (its output dropped),
# tried every 0.25 s; 1 when the time runs out.
wait_for() {
	local secs=$1 start=$SECONDS
	shift
	while ((SECONDS - start < secs)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	return 1
}

# e2e_dir PREFIX: the control plane's directory.
e2e_dir() {
	own_dir=0
	if [[ -n ${KB_E2E_DIR:-} ]]; then
		dir=$KB_E2E_DIR
	else
		dir=$(mktemp -d "/tmp/$1.XXXXXX")
		own_dir=1
	fi
}

# e2e_free_port [VAR]: sets VAR (default: port) to a port in 20000-29999
# that nothing on 127.0.0.1 listens on and that no earlier call handed out
# (200 tries; 1 when none was found).
e2e_ports_given=" "
e2e_free_port() {
	local i p
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 10000))
		[[ $e2e_ports_given == *" $p "* ]] && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			e2e_ports_given+="$p "
			printf -v "${1:-port}" %s "$p"
			return 0
		fi
	done
	return 1
}

# e2e_wait_healthy PORT PID LOG [SCHEME]: waits up to 15 s until the daemon
# PID listening on PORT answers /healthz "ok" (its cache is synced; SCHEME
# https for a server with its own certificate, as kube-scheduler); when it
# does not, or PID exits, prints the last lines of its LOG and returns 1.
e2e_wait_healthy() {
	local i scheme=${4:-http}
	for ((i = 0; i < 150; i++)); do
		[[ $(curl -sk "$scheme://127.0.0.1:$1/healthz" 2>/dev/null) == ok ]] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	tail -20 "$3" >&2
	return 1
}

# The control plane down and its directory removed, unless --keep, it was
# given (KB_E2E_DIR), or a check failed (then its logs are kept).
e2e_release_dir() {
	[[ -z $e2e_inv_pid ]] || { kill "$e2e_inv_pid" 2>/dev/null; wait "$e2e_inv_pid" 2>/dev/null; }
	((own_dir && !keep)) || return 0
	"$root/tests/cluster/down" --keep-logs "$dir" >/dev/null 2>&1 || true
	if ((fails == 0)); then
		rm -rf "$dir"
	else
		echo "$e2e_name: logs kept in $dir" >&2
	fi
}

# e2e_lease_rbac NS NAME: deploy/rbac.yaml's leader-election Role and
# RoleBinding for the Lease NS/NAME (tests/cluster/lib.sh kb_lease_rbac).
e2e_lease_rbac() { (. "$root/tests/cluster/lib.sh" && kb_lease_rbac "$@"); }

# e2e_invariants NODES.json PODS.json: the kubelet's admission rule (no node
# over its allocatable in any resource) and the GPU sharing rules, checked on
# the API's own record (`kubectl get nodes|pods -A -o json`) by
# gpu_check.py; prints what broke.
e2e_invariants() {
	local out
	out=$(python3 "$here/gpu_check.py" "$1" "$2") && return 0
	grep '^BROKEN' <<<"$out"
	return 1
}

# e2e_watch_invariants: from now until e2e_summary, e2e_invariants on the
# API's record (admin.kubeconfig of $dir) every 2 s in the background, so
# that a node over its allocatable is caught whenever it happens in a test,
# not only at the moments a case looks. Findings go to
# $dir/invariants.broken, the number of snapshots to $dir/invariants.polls.
e2e_inv_pid=
e2e_watch_invariants() {
	local kc=$dir/admin.kubeconfig
	: >"$dir/invariants.broken"
	echo 0 >"$dir/invariants.polls"
	(
		n=0
		while :; do
			if kubectl --kubeconfig "$kc" get nodes -o json >"$dir/.inv-nodes.json" 2>/dev/null &&
				kubectl --kubeconfig "$kc" get pods -A -o json >"$dir/.inv-pods.json" 2>/dev/null; then
				out=$(e2e_invariants "$dir/.inv-nodes.json" "$dir/.inv-pods.json" 2>&1) ||
					echo "${out:-gpu_check.py failed with no finding}" >>"$dir/invariants.broken"
				n=$((n + 1))
				# a rename, so that a kill between the truncation and the
				# write never leaves the count empty
				echo "$n" >"$dir/.invariants.polls" &&
					mv "$dir/.invariants.polls" "$dir/invariants.polls"
			fi
			sleep 2
		done
	) &
	e2e_inv_pid=$!
}

# e2e_invariants_checked: stops the watch and checks what it found (a
# check of its own); nothing when no watch runs.
e2e_invariants_checked() {
	[[ -n $e2e_inv_pid ]] || return 0
	kill "$e2e_inv_pid" 2>/dev/null
	wait "$e2e_inv_pid" 2>/dev/null
	e2e_inv_pid=
	local polls
	polls=$(cat "$dir/invariants.polls" 2>/dev/null)
	[[ $polls =~ ^[0-9]+$ ]] || polls=0
	if ((polls > 0)) && [[ ! -s $dir/invariants.broken ]]; then
		pass "no node over its allocatable in any of $polls snapshots of the API's record (every 2 s)"
	else
		sort -u "$dir/invariants.broken" 2>/dev/null | head -20
		fail "no node over its allocatable in any of $polls snapshots of the API's record (every 2 s)"
	fi
}

e2e_summary() {
	e2e_invariants_checked
	echo "$e2e_name: $passes passed, $fails failed$( ((skips)) && echo ", $skips skipped")"
}

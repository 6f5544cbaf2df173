# tests/cluster/path.sh - sourced, not run: puts KB_TOOLS_BIN first on PATH.
# shellcheck shell=bash
#
# KB_TOOLS_BIN (${KB_CLUSTER_BIN:-~/.cache/kube-batchd/cluster-bin}/tools)
# holds the tools the scripts pin rather than take from the system:
#   kubectl     built from the control plane's own k8s.io/kubernetes module
#               (tests/cluster/go.mod), so its version matches the server's;
#               lib.sh kb_build_kubectl (run by scripts/setup and up) makes it
#   go, gofmt   links to the Go that scripts/setup installed, present only
#               when the system's go was missing or older than the go.mod
#               files of tests/ need
# Sourced by tests/cluster/lib.sh (so by up, down, smoke-test and the
# operator and fault-proxy builds), tests/e2e/lib.sh, run-client-test,
# scripts/test and scripts/demo. Sourcing it twice changes nothing; a
# missing directory is harmless (PATH then finds the system's tools).
# Sets KB_TOOLS_BIN and exports PATH; nothing else.
#
# Where python3 is pyenv's shim (a shell script that asks pyenv for the
# version on every call: about 0.4 s a call, against 0.03 s for the
# interpreter itself; the end-to-end scripts call python3 hundreds of times),
# the directory of the interpreter the shim picks now is put first on PATH,
# so the same interpreter answers without the shim.

KB_TOOLS_BIN=${KB_CLUSTER_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-batchd/cluster-bin}/tools
case ":$PATH:" in
*":$KB_TOOLS_BIN:"*) ;;
*) PATH=$KB_TOOLS_BIN:$PATH ;;
esac
kb_python=$(command -v python3 2>/dev/null || true)
if [[ $kb_python == */shims/python3 ]]; then
	kb_python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
	if [[ $kb_python == /* && -x $kb_python ]]; then
		PATH=${kb_python%/*}:$PATH
	fi
fi
unset kb_python
export PATH
hash -r

#!/usr/bin/env bash
# End-to-end: credentials against the local control plane (tests/cluster/up,
# whose tokens.csv accepts the scheduler's token and whose CA signs client
# certificates), with kubectl (client-go) as the counterpart for the exec
# plugin protocol.
#
#   tests/e2e/creds.sh [--build BUILDDIR] [--keep]
#
# An exec plugin (a shell script written here, logging each run) gives the
# scheduler's token: `top nodes` and kubectl, run with the same kubeconfig
# and plugin, run it (kube-batchd once, kubectl twice: client-go makes two
# authenticators), pass it the same KUBERNETES_EXEC_INFO,
# arguments and environment; the daemon, its token expiring every few
# seconds, runs it again after each expiry and not per request; a plugin
# whose first token the server refuses (401) is run again and the command
# succeeds; a plugin that gives a client certificate signed by the
# cluster's CA authenticates. Errors: a failing plugin (exit code, install
# hint), one writing more than the output limit, a missing tokenFile,
# insecure-skip-tls-verify with a CA (kubectl refuses it too), an
# auth-provider.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary).
set -uo pipefail

e2e_name=creds e2e_help_end=21
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_args "$@"
e2e_need kubectl curl openssl flock setsid python3
[[ -x $root/tests/cluster/up ]] || { echo "creds: SKIP: no tests/cluster/up" >&2; exit 77; }
e2e_binary
e2e_dir kb-creds
sched_pid=
cleanup() {
	stop_sched
	e2e_release_dir
}
trap cleanup EXIT

"$root/tests/cluster/up" "$dir" >"$dir.up.log" 2>&1 || { cat "$dir.up.log" >&2; echo "FAIL: control plane did not start"; exit 1; }
rm -f "$dir.up.log"
schedcfg=$dir/scheduler.kubeconfig
kv() { kubectl config view --kubeconfig "$schedcfg" --raw -o "jsonpath=$1"; }
server=$(kv '{.clusters[0].cluster.server}')
ca_data=$(kv '{.clusters[0].cluster.certificate-authority-data}')
token=$(kv '{.users[0].user.token}')
w=$dir/creds
rm -rf "$w" # a KB_E2E_DIR used before
mkdir -p "$w/kubecache"
export KUBECACHEDIR=$w/kubecache # kubectl's discovery cache, not the user's
e2e_free_port || { fail "a free port"; exit 1; }

# The plugin: one line per run in calls.$CALLER, what it was given in
# info.$CALLER.N (KUBERNETES_EXEC_INFO) and args.$CALLER.N (arguments and
# two variables), a line on stderr, and an ExecCredential whose token
# (TOKEN, from the kubeconfig's env; BAD_FIRST: a wrong one on the first
# run) expires in $EXPIRE seconds.
cat >"$w/plugin.sh" <<EOF
#!/bin/sh
d=$w
n=\$(( \$(cat "\$d/calls.\$CALLER" 2>/dev/null | wc -l) + 1 ))
echo run >>"\$d/calls.\$CALLER"
printf '%s' "\$KUBERNETES_EXEC_INFO" >"\$d/info.\$CALLER.\$n"
{ echo "argc=\$#"; for a in "\$@"; do echo "arg=\$a"; done; echo "FOO=\$FOO"; echo "BAR=\$BAR"; } >"\$d/args.\$CALLER.\$n"
echo "plugin: run \$n for \$CALLER" >&2
tok=\$TOKEN
[ -n "\${BAD_FIRST:-}" ] && [ "\$n" = 1 ] && tok=not-a-token
exp=\$(date -u -d "+\${EXPIRE:-3600} seconds" +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}\n' "\$tok" "\$exp"
EOF
chmod +x "$w/plugin.sh"

# kubeconfig NAME USER-YAML [CLUSTER-EXTRA]: $w/NAME.kubeconfig for the
# control plane with the user given (indented four spaces).
kubeconfig() {
	cat >"$w/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: local, user: u}}]
clusters:
- name: local
  cluster:
    server: $server
    ${3:-certificate-authority-data: $ca_data}
users:
- name: u
  user:
$2
EOF
}
kubeconfig exec "    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      args: [--flag, two words]
      env: [{name: TOKEN, value: $token}, {name: FOO, value: from-kubeconfig}]
      interactiveMode: IfAvailable
      provideClusterInfo: true
      installHint: 'install it from example.com'"
runs() { [[ -f $w/calls.$1 ]] && wc -l <"$w/calls.$1" || echo 0; }

# ---- the plugin protocol, compared with kubectl ------------------------------------
out=$(CALLER=kb FOO=from-env BAR=inherited "$bin" top nodes --kubeconfig "$w/exec.kubeconfig" 2>"$w/top.err")
check "top nodes works with the exec plugin's token" grep -q "Allocated/Total GPUs" <<<"$out"
grep -q 'plugin: run 1 for kb' "$w/top.err" || cat "$w/top.err" >&2
check "top nodes: the plugin's stderr is in our log" grep -q 'exec plugin .*plugin.sh" of user "u".*plugin: run 1 for kb' "$w/top.err"
check "top nodes ran the plugin once ($(runs kb))" test "$(runs kb)" = 1
CALLER=kubectl FOO=from-env BAR=inherited kubectl --kubeconfig "$w/exec.kubeconfig" get nodes </dev/null >"$w/kubectl.out" 2>&1
check "kubectl works with the same kubeconfig and plugin" test $? = 0
# kubectl (client-go) makes two authenticators, so runs it twice a process.
check "kubectl ran it too, not fewer times ($(runs kubectl))" test "$(runs kubectl)" -ge 1
check "KUBERNETES_EXEC_INFO is byte for byte client-go's" cmp "$w/info.kubectl.1" "$w/info.kb.1"
check "arguments and environment are client-go's" cmp "$w/args.kubectl.1" "$w/args.kb.1"
check "the kubeconfig's env replaces ours, ours is inherited" grep -qx 'FOO=from-kubeconfig' "$w/args.kb.1"
python3 - "$w/info.kb.1" "$server" "$ca_data" <<'EOF' >"$w/info.check" 2>&1
import base64, json, sys
info = json.load(open(sys.argv[1]))
assert info["apiVersion"] == "client.authentication.k8s.io/v1" and info["kind"] == "ExecCredential", info
assert info["spec"]["interactive"] is False, info
cl = info["spec"]["cluster"]
assert cl["server"] == sys.argv[2], cl
assert base64.b64decode(cl["certificate-authority-data"]) == base64.b64decode(sys.argv[3]), cl
EOF
check "KUBERNETES_EXEC_INFO: interactive false, the cluster's server and CA" test $? = 0

# ---- the daemon: once per expiry, not per request ------------------------------------
CALLER=daemon EXPIRE=4 "$bin" --kubeconfig "$w/exec.kubeconfig" --listen-address "127.0.0.1:$port" \
	--leader-elect --leader-elect-retry-period=1s --leader-elect-renew-deadline=3s \
	--leader-elect-lease-duration=5s --leader-elect-resource-name=creds-e2e >"$w/daemon.log" 2>&1 &
sched_pid=$!
if e2e_wait_healthy "$port" "$sched_pid" "$w/daemon.log"; then
	pass "the daemon is healthy with the exec plugin's token"
	sleep 14
	n=$(runs daemon)
	reqs=$(curl -s "127.0.0.1:$port/metrics" | awk '/^kube_batchd_api_requests_total /{print $2}')
	kill -0 "$sched_pid" 2>/dev/null
	check "the daemon is still running after its tokens expired" test $? = 0
	# 3 clients, renewals every second, lists and watches: far more requests
	# than runs; a token lasting 4 s over about 15 s: 2 to 6 runs.
	check "the daemon ran the plugin again after expiry, not per request ($n runs, ${reqs:-?} requests)" \
		test "$n" -ge 2 -a "$n" -le 6
	check "every run had the same KUBERNETES_EXEC_INFO as kubectl's" \
		bash -c 'for f in "$1"/info.daemon.*; do cmp -s "$f" "$1/info.kubectl.1" || exit 1; done' _ "$w"
	# Every refused request is logged as "HTTP 401" (reflectors, writers,
	# the lease); a lost lease as "leader election lost". (A bare 401 also
	# matched a port number, 127.0.0.1:20401, failing a clean run.)
	lost=$(grep -cE 'HTTP 401|Unauthorized|leader election lost' "$w/daemon.log")
	check "no 401 and no lost lease in the daemon's log ($lost)" test "$lost" = 0
else
	fail "the daemon is healthy with the exec plugin's token"
fi
stop_sched

# ---- a refused token: run again once --------------------------------------------------
out=$(CALLER=bad BAD_FIRST=1 "$bin" top nodes --kubeconfig "$w/exec.kubeconfig" 2>"$w/bad.err")
check "a 401 to the plugin's first token: run again, and top nodes works" grep -q "Allocated/Total GPUs" <<<"$out"
check "... the plugin ran twice ($(runs bad))" test "$(runs bad)" = 2

# ---- a client certificate from the plugin -------------------------------------------
(
	cd "$w" &&
		openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=kube-batchd-scheduler" &&
		openssl x509 -req -in client.csr -CA "$dir/pki/ca.crt" -CAkey "$dir/pki/ca.key" -CAcreateserial \
			-CAserial "$w/ca.srl" -out client.crt -days 1
) >"$w/openssl.log" 2>&1 || { cat "$w/openssl.log" >&2; fail "a client certificate"; }
python3 - "$w" >"$w/cert-plugin.sh" <<'EOF'
import json, sys
d = sys.argv[1]
cred = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
        "status": {"clientCertificateData": open(d + "/client.crt").read(),
                   "clientKeyData": open(d + "/client.key").read()}}
print("#!/bin/sh\necho run >>%s/calls.cert\ncat <<'JSON'\n%s\nJSON" % (d, json.dumps(cred)))
EOF
chmod +x "$w/cert-plugin.sh"
kubeconfig cert "    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: $w/cert-plugin.sh}"
out=$("$bin" top nodes --kubeconfig "$w/cert.kubeconfig" 2>"$w/cert.err")
check "a client certificate from the plugin authenticates (top nodes)" grep -q "Allocated/Total GPUs" <<<"$out"
[[ $out == *Allocated* ]] || cat "$w/cert.err" >&2
kubectl --kubeconfig "$w/cert.kubeconfig" get nodes >/dev/null 2>&1
check "... as it does for kubectl" test $? = 0
kubeconfig nocert "    exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: $w/plugin.sh, env: [{name: TOKEN, value: nobody-knows-this}]}"
CALLER=wrong "$bin" top nodes --kubeconfig "$w/nocert.kubeconfig" >/dev/null 2>"$w/wrong.err"
rc=$?
check "a token the server does not know: refused (401) after one more run ($(runs wrong))" \
	bash -c 'test $0 != 0 && grep -q 401 "$1" && test "$2" = 2' $rc "$w/wrong.err" "$(runs wrong)"

# ---- errors -----------------------------------------------------------------------------
# expect_error NAME WHAT TEXT...: top nodes with NAME.kubeconfig fails and
# its stderr has every TEXT.
expect_error() {
	local name=$1 what=$2 t ok=1
	shift 2
	"$bin" top nodes --kubeconfig "$w/$name.kubeconfig" >/dev/null 2>"$w/$name.err" && ok=0
	for t; do grep -qF -- "$t" "$w/$name.err" || ok=0; done
	((ok)) || cat "$w/$name.err" >&2
	check "$what" test $ok = 1
}
printf '#!/bin/sh\necho "no credentials here" >&2\nexit 1\n' >"$w/failing.sh"
chmod +x "$w/failing.sh"
kubeconfig failing "    exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: $w/failing.sh, installHint: 'brew install failing'}"
expect_error failing "a failing plugin: exit code, install hint, kubeconfig and user named" \
	"$w/failing.kubeconfig: user \"u\": exec plugin \"$w/failing.sh\": failed with exit code 1 (install hint: brew install failing)"
printf '#!/bin/sh\nhead -c 2000000 /dev/zero | tr "\\\\0" x\n' >"$w/chatty.sh"
chmod +x "$w/chatty.sh"
kubeconfig chatty "    exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: $w/chatty.sh}"
expect_error chatty "a plugin writing more than the limit is killed, named" \
	"user \"u\": exec plugin \"$w/chatty.sh\": wrote more than 1048576 bytes to standard output: killed"
kubeconfig notoken "    tokenFile: $w/absent-token"
expect_error notoken "a missing tokenFile is an error at start naming the user and path" \
	"$w/notoken.kubeconfig" "user \"u\": tokenFile $w/absent-token: No such file or directory"
kubeconfig insecure "    token: $token" "certificate-authority-data: $ca_data
    insecure-skip-tls-verify: true"
expect_error insecure "insecure-skip-tls-verify with a CA is an error naming the cluster" \
	"cluster \"local\": insecure-skip-tls-verify is true and certificate-authority-data is given"
kubectl --kubeconfig "$w/insecure.kubeconfig" get nodes >/dev/null 2>"$w/insecure.kubectl.err"
check "... kubectl refuses it too" grep -q "root certificates file with the insecure flag is not allowed" "$w/insecure.kubectl.err"
kubeconfig gcp "    auth-provider: {name: gcp, config: {}}"
expect_error gcp "an auth-provider is refused, naming its exec plugin" \
	"user \"u\": auth-provider \"gcp\" is not supported" "gke-gcloud-auth-plugin"

e2e_summary
((fails == 0))

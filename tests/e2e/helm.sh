#!/usr/bin/env bash
# End-to-end: the Helm chart deploy/helm/kube-batchd with real helm (built
# from its Go module by tests/tools/helm/build) and the local control plane
# (tests/cluster/up --kwok --controllers).
#
#   tests/e2e/helm.sh [--build BUILDDIR] [--keep] [static] [cluster]
#
# static (no cluster): `helm lint --strict` passes; a bad values file
# (replicas: "two"), an unknown key and replicas: 2 without leader election
# fail with the value named; the chart's CRD copies are byte-identical to
# deploy/crds and its appVersion is meson.build's version; `helm template`
# with the default values renders the objects of `kubectl kustomize deploy/`
# and of deploy/crds, compared as data, with only the documented
# differences allowed (helm's labels, the metrics Service, the CRDs'
# resource policy, the scheduler configuration's checksum); non-default
# values reach the manifest.
# cluster: `helm install` (release kb, namespace batch-system) with the
# kube-batch CRDs missing and volcano's and scheduler-plugins' present, as
# another project would have installed them: the objects exist, the missing
# CRDs are made, the present ones untouched, the Deployment's pod (bound by
# the test, run by kwok) becomes Ready; then the real daemon runs with the
# installed Deployment's args, the installed ConfigMap's files and a token of
# the chart's ServiceAccount: /healthz ok, its Lease where the args say, a
# kube-batch gang of 3 bound, a gang short of its minMember left alone;
# `helm upgrade` of the queue file updates the ConfigMap without rolling the
# pod, one of the scheduler configuration rolls it; `helm uninstall` removes
# the release's objects and keeps its CRDs (and their PodGroups); a second
# install adopts the kept CRDs. Before the uninstall, prometheus-operator's
# ServiceMonitor CRD (tests/tools/prometheus-operator/crd) is installed and
# an upgrade enables the chart's ServiceMonitor: the API server accepts it,
# it reads back whole, and it selects the metrics Service by its port.
#
# Exit 0 only if every check passed; 77 (skip) without kubectl, curl,
# python3 with PyYAML, go (to build helm), flock, setsid or openssl.
# Environment: KB_E2E_DIR (control-plane dir), KUBE_BATCHD (the binary),
# KB_HELM (a helm binary instead of tests/tools/helm/build's).
set -uo pipefail

e2e_name=helm e2e_help_end=36
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_args "$@"
cases=("${e2e_cases[@]}")
((${#cases[@]})) || cases=(static cluster)
e2e_need kubectl curl python3 flock setsid openssl
python3 -c 'import yaml' 2>/dev/null || { echo "helm: SKIP: python3 has no yaml module (PyYAML)" >&2; exit 77; }
chart=$root/deploy/helm/kube-batchd
if [[ -n ${KB_HELM:-} ]]; then
	helm=$KB_HELM
else
	e2e_need go
	helm=$("$root/tests/tools/helm/build") || { echo "FAIL: helm builds (tests/tools/helm/build)"; exit 1; }
fi
[[ -x $helm ]] || { echo "FAIL: no helm binary at $helm"; exit 1; }
work=$(mktemp -d /tmp/kb-helm-work.XXXXXX)

# ---- helpers -------------------------------------------------------------------

# py SCRIPT ARGS...: python3 with the shared functions below loaded first.
py_lib='
import json, sys, yaml
def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]
def key(o):
    m = o.get("metadata", {})
    return "%s %s %s/%s" % (o.get("apiVersion"), o.get("kind"), m.get("namespace", ""), m.get("name"))
def find(objs, kind, name=None):
    got = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    if len(got) != 1:
        sys.exit("%d objects of kind %s%s" % (len(got), kind, " named " + name if name else ""))
    return got[0]
'
py() {
	local script=$1
	shift
	python3 -c "$py_lib$script" "$@"
}

# The comparison of `helm template` (default values) with deploy/. The
# differences the chart is allowed (deploy/README.md, "Helm"), taken out of
# the helm side before comparing; each is checked to be as documented:
#   - helm's labels (helm.sh/chart, app.kubernetes.io/instance, version,
#     managed-by), on every object, in the Deployment's selector and pod
#     template (deploy/ has app.kubernetes.io/name alone);
#   - the pod template's checksum/scheduler-conf annotation;
#   - the CRDs' helm.sh/resource-policy: keep annotation;
#   - the metrics Service kube-batchd-metrics (not in deploy/).
# Everything else must be equal, object for object; a difference prints
# both sides.
compare_py='
import difflib, hashlib
HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by")
problems = []
def strip_labels(where, labels):
    if not isinstance(labels, dict) or labels.get("app.kubernetes.io/instance") != "kube-batchd":
        problems.append("%s: no app.kubernetes.io/instance: kube-batchd" % where)
        return
    for k in HELM_LABELS:
        labels.pop(k, None)
def pop_empty(d, k):
    if k in d and not d[k]:
        del d[k]
helm = {}
for o in docs(sys.argv[1]):
    k = key(o)
    md = o["metadata"]
    strip_labels(k + " labels", md.get("labels"))
    if o["kind"] == "Service" and md["name"] == "kube-batchd-metrics":
        continue
    if o["kind"] == "CustomResourceDefinition":
        if md.get("annotations", {}).pop("helm.sh/resource-policy", None) != "keep":
            problems.append("%s: no helm.sh/resource-policy: keep" % k)
    if o["kind"] == "Deployment":
        strip_labels(k + " selector", o["spec"]["selector"]["matchLabels"])
        t = o["spec"]["template"]["metadata"]
        strip_labels(k + " pod labels", t.get("labels"))
        sum = t.get("annotations", {}).pop("checksum/scheduler-conf", None)
        pop_empty(t, "annotations")
        conf = find(docs(sys.argv[1]), "ConfigMap")["data"]["scheduler.conf"]
        if sum != hashlib.sha256(conf.encode()).hexdigest():
            problems.append("%s: checksum/scheduler-conf %s is not the sha256 of scheduler.conf" % (k, sum))
    pop_empty(md, "annotations")
    helm[k] = o
want = {key(o): o for path in sys.argv[2:] for o in docs(path)}
for k in sorted(set(helm) | set(want)):
    if k not in helm:
        problems.append("only in deploy/: " + k)
    elif k not in want:
        problems.append("only in the chart: " + k)
    elif helm[k] != want[k]:
        a = json.dumps(want[k], indent=1, sort_keys=True).splitlines()
        b = json.dumps(helm[k], indent=1, sort_keys=True).splitlines()
        problems.append("differs: %s\n%s" % (k, "\n".join(difflib.unified_diff(a, b, "deploy", "chart", lineterm=""))))
for p in problems:
    print(p)
print("compared %d objects" % len(want), file=sys.stderr)
sys.exit(1 if problems else 0)
'

# fails_naming WHAT ARGS...: `helm ARGS...` fails and its message holds WHAT.
fails_naming() {
	local what=$1 out
	shift
	if out=$("$helm" "$@" 2>&1); then
		echo "helm $* succeeded" >&2
		return 1
	fi
	grep -qF -- "$what" <<<"$out" || { echo "$out" >&2; return 1; }
}

# ---- static: lint, the default rendering against deploy/, the values --------------

case_static() {
	local out
	check "static: helm lint --strict passes" bash -c "'$helm' lint --strict '$chart' >'$work/lint.log' 2>&1 || { cat '$work/lint.log' >&2; exit 1; }"
	printf 'replicas: "two"\n' >"$work/bad-replicas.yaml"
	check "static: helm lint fails on replicas: \"two\", naming /replicas" \
		fails_naming "at '/replicas': got string, want integer" lint "$chart" -f "$work/bad-replicas.yaml"
	check "static: an unknown key (crds.volcanno) is refused, named" \
		fails_naming "additional properties 'volcanno' not allowed" template kb "$chart" --set crds.volcanno=true
	check "static: replicas 2 without leader election is refused, naming leaderElection.enabled" \
		fails_naming "leaderElection.enabled: must be true with replicas: 2" template kb "$chart" --set replicas=2,leaderElection.enabled=false
	check "static: a bad duration (schedulePeriod: 1x) is refused, named" \
		fails_naming "at '/schedulePeriod'" template kb "$chart" --set schedulePeriod=1x

	local f ok=1
	for f in "$root"/deploy/crds/*.yaml; do
		[[ $f == */kustomization.yaml ]] && continue
		cmp "$f" "$chart/files/crds/${f##*/}" || ok=0
	done
	for f in "$chart"/files/crds/*.yaml; do
		[[ -f $root/deploy/crds/${f##*/} ]] || { echo "only in the chart: $f" >&2; ok=0; }
	done
	check "static: the chart's files/crds are deploy/crds' files, byte for byte" test "$ok" = 1
	local app meson
	app=$(awk '$1 == "appVersion:" {gsub(/"/, "", $2); print $2}' "$chart/Chart.yaml")
	meson=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$root/meson.build" | head -1)
	check "static: Chart.yaml appVersion ($app) is meson.build's version ($meson)" test -n "$app" -a "$app" = "$meson"

	"$helm" template kube-batchd "$chart" >"$work/default.yaml" 2>"$work/template.log" || cat "$work/template.log" >&2
	kubectl kustomize "$root/deploy" >"$work/kustomize.yaml" && kubectl kustomize "$root/deploy/crds" >"$work/crds.yaml" ||
		fail "static: kubectl kustomize deploy/ and deploy/crds"
	check "static: helm template (defaults) = kubectl kustomize deploy/ + deploy/crds, but for the documented differences" \
		py "$compare_py" "$work/default.yaml" "$work/kustomize.yaml" "$work/crds.yaml"

	# Every value that is not in deploy/ reaches the manifest.
	"$helm" template kb "$chart" -n ns1 --set namespace= --set replicas=2 --set leaderElection.name=lease-x \
		--set image.repository=reg.example/kube-batchd,image.tag=v9,image.pullPolicy=Always --set 'image.pullSecrets={regcred}' \
		--set 'extraArgs={--kube-api-qps=50}' --set nodeSelector.pool=system --set 'tolerations[0].operator=Exists' \
		--set crds.volcano=false,crds.schedulerPlugins=false --set metrics.port=12345 \
		--set metrics.serviceMonitor.enabled=true,metrics.serviceMonitor.labels.release=prom --set config.queues= \
		>"$work/values.yaml" 2>"$work/template.log" || cat "$work/template.log" >&2
	out=$(py '
objs = docs(sys.argv[1])
d = find(objs, "Deployment", "kb-kube-batchd")
s = d["spec"]["template"]["spec"]
c = s["containers"][0]
want_args = ["--scheduler-name=kube-batchd", "--scheduler-conf=/etc/kube-batchd/scheduler.conf",
    "--schedule-period=1s", "--schedule-delay=150ms", "--default-queue=default", "--leader-elect=true",
    "--leader-elect-resource-namespace=ns1", "--leader-elect-resource-name=lease-x",
    "--listen-address=0.0.0.0:12345", "-v=1", "--kube-api-qps=50"]
checks = {
    "namespace": d["metadata"]["namespace"] == "ns1",
    "replicas": d["spec"]["replicas"] == 2,
    "args": c["args"] == want_args,
    "image": (c["image"], c["imagePullPolicy"]) == ("reg.example/kube-batchd:v9", "Always"),
    "pullSecrets": s.get("imagePullSecrets") == [{"name": "regcred"}],
    "nodeSelector": s.get("nodeSelector") == {"pool": "system"},
    "tolerations": s.get("tolerations") == [{"operator": "Exists"}],
    "port": c["ports"][0]["containerPort"] == 12345,
    "no queues.yaml": "queues.yaml" not in find(objs, "ConfigMap")["data"],
    "service": find(objs, "Service")["spec"]["ports"][0]["port"] == 12345,
    "crds": sorted(o["metadata"]["name"] for o in objs if o["kind"] == "CustomResourceDefinition")
        == ["podgroups.scheduling.incubator.k8s.io", "queues.scheduling.incubator.k8s.io"],
    "serviceMonitor": (lambda m: m["apiVersion"] == "monitoring.coreos.com/v1"
        and m["metadata"]["labels"].get("release") == "prom"
        and m["spec"]["endpoints"] == [{"port": "http-metrics", "path": "/metrics", "interval": "30s"}]
        and m["spec"]["namespaceSelector"] == {"matchNames": ["ns1"]})(find(objs, "ServiceMonitor")),
    "binding subject": find(objs, "ClusterRoleBinding")["subjects"] == [{"kind": "ServiceAccount", "name": "kb-kube-batchd", "namespace": "ns1"}],
}
bad = [k for k, v in checks.items() if not v]
if bad:
    print("wrong:", ", ".join(bad))
    print(json.dumps(d, indent=1))
sys.exit(1 if bad else 0)
' "$work/values.yaml" 2>&1)
	check "static: non-default values (namespace, replicas, Lease, image, pull secrets, args, scheduling, CRD families, port, ServiceMonitor) reach the manifest" test -z "$out"
	[[ -z $out ]] || echo "$out"
}

# ---- cluster: install, the real daemon with the release's objects, upgrade, uninstall

release=kb ns=batch-system name=kb-kube-batchd
sched_pid=
cleanup() {
	stop_sched
	[[ ${dir:-} ]] && e2e_release_dir
	# The rendered manifests, helm's output and the daemon's log: kept when
	# a check failed.
	if ((fails == 0)); then rm -rf "$work"; else echo "helm: helm's and the daemon's files kept in $work" >&2; fi
}
trap cleanup EXIT

exists() { k get "$@" >/dev/null 2>&1; }
rv() { k get "$@" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null; }
h() { "$helm" --kubeconfig "$admin" -n "$ns" "$@"; }

# release_objects: the release's objects, one "KIND/NAME NAMESPACE" a line
# ("-": cluster-scoped); obj_exists, obj_gone OBJ NAMESPACE.
release_objects() {
	printf '%s\n' "serviceaccount/$name $ns" "configmap/$name-config $ns" "deployment/$name $ns" \
		"service/$name-metrics $ns" "clusterrole/$name -" "clusterrolebinding/$name -"
}
obj_exists() { if [[ $2 == - ]]; then exists "$1"; else exists "$1" -n "$2"; fi; }
obj_gone() { ! obj_exists "$@"; }

# pod_ready_after_binding: the Deployment's pod, bound here to the node (no
# default scheduler runs), becomes Ready under kwok.
deployment_ready() {
	local pod
	wait_for 60 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get pods -n $ns -l app.kubernetes.io/instance=$release -o name) ]]" || return 1
	pod=$(k get pods -n "$ns" -l "app.kubernetes.io/instance=$release" -o jsonpath='{.items[0].metadata.name}')
	k create -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Binding
metadata: {name: $pod, namespace: $ns}
target: {apiVersion: v1, kind: Node, name: helm-node-1}
EOF
	k rollout status "deployment/$name" -n "$ns" --timeout=60s >/dev/null
}

# run_daemon: the real kube-batchd with the installed Deployment's args and
# ConfigMap (its files written under $work/etc, the mount path in the args
# rewritten to it: the one change), and a kubeconfig with a token of the
# chart's ServiceAccount (instead of the in-cluster one).
run_daemon() {
	local server ca token args
	h get manifest "$release" >"$work/manifest.yaml" || return 1
	mkdir -p "$work/etc"
	mapfile -d '' args < <(py '
import os
objs = docs(sys.argv[1])
d = find(objs, "Deployment")
c = d["spec"]["template"]["spec"]["containers"][0]
vol = next(v for v in d["spec"]["template"]["spec"]["volumes"] if "configMap" in v)
mount = next(m["mountPath"] for m in c["volumeMounts"] if m["name"] == vol["name"])
cm = find(objs, "ConfigMap", vol["configMap"]["name"])
for f, text in cm["data"].items():
    with open(os.path.join(sys.argv[2], f), "w") as out:
        out.write(text)
for a in c.get("command", []) + c["args"]:
    sys.stdout.write(a.replace(mount + "/", sys.argv[2] + "/") + "\0")
' "$work/manifest.yaml" "$work/etc") || return 1
	echo "helm: the Deployment's args: ${args[*]}" >&2
	server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
	ca=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
	token=$(k create token "$name" -n "$ns" --duration=1h) || return 1
	cat >"$work/sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: $name, user: {token: "$token"}}]
contexts: [{name: local, context: {cluster: local, user: $name}}]
current-context: local
EOF
	sched_log=$work/kube-batchd.log
	"$bin" --kubeconfig "$work/sa.kubeconfig" "${args[@]}" >"$sched_log" 2>&1 &
	sched_pid=$!
	e2e_wait_healthy "$hport" "$sched_pid" "$sched_log"
}

# gang NS NAME MIN PODS: a kube-batch PodGroup and PODS pods of 1 cpu in it.
gang() {
	local i
	printf -- '---\napiVersion: scheduling.incubator.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s, namespace: %s}\nspec: {minMember: %s}\n' "$2" "$1" "$3"
	for ((i = 0; i < $4; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2-$i, namespace: $1, annotations: {scheduling.k8s.io/group-name: $2}}
spec:
  schedulerName: kube-batchd
  containers: [{name: main, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1"}}}]
EOF
	done
}

case_cluster() {
	local o n ok foreign_rv crd old new
	e2e_binary
	e2e_dir kb-helm
	"$root/tests/cluster/up" --kwok --controllers "$dir" >"$dir.up.log" 2>&1 ||
		{ cat "$dir.up.log" >&2; fail "the control plane starts (tests/cluster/up --kwok --controllers)"; return; }
	rm -f "$dir.up.log"
	admin=$dir/admin.kubeconfig
	e2e_watch_invariants
	k() { kubectl --kubeconfig "$admin" "$@"; }
	e2e_free_port hport || { fail "a free port"; return; }

	# up made all five CRDs from deploy/crds, as another project's install
	# would have: the kube-batch ones go, for the chart to make; volcano's
	# and scheduler-plugins' stay and must stay untouched.
	k delete crd podgroups.scheduling.incubator.k8s.io queues.scheduling.incubator.k8s.io --wait >/dev/null ||
		{ fail "the kube-batch CRDs are deleted before the install"; return; }
	foreign_rv=$(rv crd podgroups.scheduling.volcano.sh)/$(rv crd queues.scheduling.volcano.sh)/$(rv crd podgroups.scheduling.x-k8s.io)
	k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: helm-node-1, labels: {kubernetes.io/hostname: helm-node-1}}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
EOF

	# The release's namespace, not deploy/'s kube-system (namespace empty),
	# and the daemon's port free on this machine.
	if h install "$release" "$chart" --create-namespace --set namespace= --set metrics.port="$hport" >"$work/install.log" 2>&1; then
		pass "cluster: helm install succeeds"
	else
		cat "$work/install.log" >&2
		fail "cluster: helm install succeeds"
		return
	fi
	ok=1
	while read -r o n; do obj_exists "$o" "$n" || { echo "missing: $o ($n)" >&2; ok=0; }; done < <(release_objects)
	check "cluster: the release's ServiceAccount, ConfigMap, Deployment, Service, ClusterRole and binding exist" test "$ok" = 1
	for crd in podgroups.scheduling.incubator.k8s.io queues.scheduling.incubator.k8s.io; do
		check "cluster: the release made CRD $crd, with helm.sh/resource-policy: keep" \
			test "$(k get crd "$crd" -o jsonpath='{.metadata.annotations.helm\.sh/resource-policy}' 2>/dev/null)" = keep
	done
	check "cluster: volcano's and scheduler-plugins' CRDs, present before, are untouched (same resourceVersions)" \
		test "$(rv crd podgroups.scheduling.volcano.sh)/$(rv crd queues.scheduling.volcano.sh)/$(rv crd podgroups.scheduling.x-k8s.io)" = "$foreign_rv"
	check "cluster: helm's notes name the CRDs it left as they were" \
		grep -q "left as they are: podgroups.scheduling.volcano.sh, queues.scheduling.volcano.sh, podgroups.scheduling.x-k8s.io" "$work/install.log"
	check "cluster: the Deployment's pod (bound by the test, run by kwok) becomes Ready" deployment_ready

	# The real daemon with the release's args, configuration and RBAC.
	if run_daemon; then
		pass "cluster: kube-batchd with the Deployment's args, the ConfigMap's files and the ServiceAccount's token is healthy"
		check "cluster: its Lease is $ns/kube-batchd (--leader-elect-resource-namespace from the chart), held" \
			wait_for 20 bash -c "[[ -n \$(kubectl --kubeconfig '$admin' get lease kube-batchd -n $ns -o jsonpath='{.spec.holderIdentity}') ]]"
		check "cluster: /metrics answers on the chart's port" bash -c "curl -sf http://127.0.0.1:$hport/metrics | grep -q '^# TYPE kube_batchd_'"
		gang team-a short 3 2 | k create -f - >/dev/null
		gang team-a trio 3 3 | k create -f - >/dev/null
		check "cluster: the 3 pods of a kube-batch PodGroup (minMember 3, in the chart's CRD) are bound" \
			wait_for 30 bash -c "[[ \$(kubectl --kubeconfig '$admin' get pods -n team-a -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{\"\\n\"}{end}' | grep -c '^trio-.*=.') == 3 ]]"
		check "cluster: the 2 pods of a PodGroup of minMember 3 stay unbound" \
			test "$(k get pods -n team-a -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep -c '^short-.*=.')" = 0
		# What a refused request is logged as ("HTTP 403", the API's
		# "... is forbidden: ..."): a bare 403 matched the daemon's PID 14036
		# in a clean CI run.
		check "cluster: the daemon logged no permission error" bash -c "! grep -Ei 'forbidden|HTTP 403' '$sched_log'"
	else
		fail "cluster: kube-batchd with the Deployment's args, the ConfigMap's files and the ServiceAccount's token is healthy"
	fi
	stop_sched

	# helm upgrade: the queue file in place (the daemon re-reads it), the
	# scheduler configuration through a new pod.
	old=$(k get deployment "$name" -n "$ns" -o jsonpath='{.metadata.generation}')
	{ k get cm "$name-config" -n "$ns" -o jsonpath='{.data.queues\.yaml}'; printf -- '- name: team-c\n  weight: 2\n  namespaces: [team-c]\n'; } >"$work/queues-new.yaml"
	check "cluster: helm upgrade --set-file config.queues succeeds" bash -c "'$helm' --kubeconfig '$admin' upgrade $release '$chart' -n $ns --reuse-values \
		--set-file config.queues='$work/queues-new.yaml' >'$work/upgrade.log' 2>&1 || { cat '$work/upgrade.log' >&2; exit 1; }"
	check "cluster: the ConfigMap holds the new queue file" \
		test "$(k get cm "$name-config" -n "$ns" -o jsonpath='{.data.queues\.yaml}')" = "$(cat "$work/queues-new.yaml")"
	check "cluster: the new queue file passes kube-batchd check-config" bash -c "'$bin' check-config --queue-conf '$work/queues-new.yaml' --scheduler-conf '$work/etc/scheduler.conf' >/dev/null"
	check "cluster: a queue change leaves the Deployment's pod template alone (generation $old)" \
		test "$(k get deployment "$name" -n "$ns" -o jsonpath='{.metadata.generation}')" = "$old"
	old=$(k get deployment "$name" -n "$ns" -o jsonpath='{.spec.template.metadata.annotations.checksum/scheduler-conf}')
	printf 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n' >"$work/scheduler-new.conf"
	h upgrade "$release" "$chart" --reuse-values --set-file config.scheduler="$work/scheduler-new.conf" >"$work/upgrade.log" 2>&1 || cat "$work/upgrade.log" >&2
	new=$(k get deployment "$name" -n "$ns" -o jsonpath='{.spec.template.metadata.annotations.checksum/scheduler-conf}')
	check "cluster: a scheduler configuration change rolls the pod (checksum $old -> $new)" test -n "$new" -a "$old" != "$new"

	# The ServiceMonitor against prometheus-operator's own CRD (from its
	# pinned module): accepted, nothing of it pruned by the schema, and
	# selecting the release's metrics Service by a port that Service has.
	# (No Prometheus runs here: that it scrapes is not shown.)
	local smcrd
	if smcrd=$("$root/tests/tools/prometheus-operator/crd" 2>"$work/smcrd.log") &&
		k apply --server-side -f "$smcrd" >/dev/null 2>>"$work/smcrd.log" &&
		k wait --for condition=Established crd/servicemonitors.monitoring.coreos.com --timeout 30s >/dev/null; then
		pass "cluster: prometheus-operator's ServiceMonitor CRD (its pinned module) is installed"
		check "cluster: helm upgrade with metrics.serviceMonitor.enabled succeeds" bash -c "'$helm' --kubeconfig '$admin' upgrade $release '$chart' -n $ns \
			--reuse-values --set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.labels.release=prom \
			--set metrics.serviceMonitor.scrapeTimeout=10s >'$work/upgrade-sm.log' 2>&1 || { cat '$work/upgrade-sm.log' >&2; exit 1; }"
		check "cluster: the ServiceMonitor reads back whole (port, path, interval, timeout, label, namespace)" \
			test "$(k get servicemonitors.monitoring.coreos.com "$name" -n "$ns" -o jsonpath='{.spec.endpoints[0].port} {.spec.endpoints[0].path} {.spec.endpoints[0].interval} {.spec.endpoints[0].scrapeTimeout} {.metadata.labels.release} {.spec.namespaceSelector.matchNames[0]}' 2>&1)" \
			= "http-metrics /metrics 30s 10s prom $ns"
		check "cluster: its selector picks the release's metrics Service, which has its port" bash -c "
			sel=\$(kubectl --kubeconfig '$admin' get servicemonitors.monitoring.coreos.com $name -n $ns -o go-template='{{range \$k, \$v := .spec.selector.matchLabels}}{{\$k}}={{\$v}},{{end}}')
			svc=\$(kubectl --kubeconfig '$admin' get svc -n $ns -l \"\${sel%,}\" -o name)
			[[ \$svc == service/$name-metrics ]] &&
				kubectl --kubeconfig '$admin' get svc $name-metrics -n $ns -o jsonpath='{.spec.ports[*].name}' | grep -qw http-metrics"
	else
		cat "$work/smcrd.log" >&2
		fail "cluster: prometheus-operator's ServiceMonitor CRD (its pinned module) is installed"
	fi

	# helm uninstall: the release's objects go, its CRDs (and PodGroups) stay.
	check "cluster: helm uninstall succeeds and says the CRDs were kept" bash -c "'$helm' --kubeconfig '$admin' uninstall $release -n $ns --wait >'$work/uninstall.log' 2>&1 &&
		grep -q 'kept due to the resource policy' '$work/uninstall.log' || { cat '$work/uninstall.log' >&2; exit 1; }"
	ok=1
	while read -r o n; do wait_for 30 obj_gone "$o" "$n" || { echo "still there: $o ($n)" >&2; ok=0; }; done < <(release_objects)
	check "cluster: the release's objects are gone" test "$ok" = 1
	check "cluster: the release's CRDs are kept, with their PodGroups" \
		exists podgroups.scheduling.incubator.k8s.io trio -n team-a
	check "cluster: volcano's and scheduler-plugins' CRDs are still untouched" \
		test "$(rv crd podgroups.scheduling.volcano.sh)/$(rv crd queues.scheduling.volcano.sh)/$(rv crd podgroups.scheduling.x-k8s.io)" = "$foreign_rv"
	# A second install takes the kept CRDs back (they carry its release's
	# annotations), rather than failing on them.
	check "cluster: a second helm install adopts the kept CRDs" bash -c "'$helm' --kubeconfig '$admin' install $release '$chart' -n $ns \
		--set namespace= --set metrics.port=$hport >'$work/install2.log' 2>&1 &&
		'$helm' --kubeconfig '$admin' get manifest $release -n $ns | grep -q '^  name: podgroups.scheduling.incubator.k8s.io' ||
		{ cat '$work/install2.log' >&2; exit 1; }"
}

for c in "${cases[@]}"; do
	case $c in
	static | cluster) "case_$c" ;;
	*) echo "helm: unknown case '$c' (static, cluster)" >&2; exit 2 ;;
	esac
done
e2e_summary
((fails == 0))

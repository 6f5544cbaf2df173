// The prometheus-operator release whose ServiceMonitor CRD tests/e2e/helm.sh
// installs (example/prometheus-operator-crd/ in the module's zip), to check
// the chart's ServiceMonitor against the real schema. Only downloaded, never
// built: tests/tools/prometheus-operator/crd prints the CRD file's path.
module kube-batchd/tests/tools/prometheus-operator

go 1.24

require github.com/prometheus-operator/prometheus-operator v0.85.0

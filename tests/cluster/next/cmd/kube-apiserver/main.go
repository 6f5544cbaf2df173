// Command kube-apiserver is the upstream Kubernetes API server of the newer
// local control plane, built from the k8s.io/kubernetes Go module pinned in
// ../../go.mod (v1.37). The same program as cmd/kube-apiserver in the
// Kubernetes repository; ../../../up --next starts it on 127.0.0.1.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	command := app.NewAPIServerCommand()
	os.Exit(cli.Run(command))
}

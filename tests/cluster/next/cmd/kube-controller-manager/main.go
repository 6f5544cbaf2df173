// Command kube-controller-manager is the upstream controller manager of the
// newer local control plane, from the same module as ../kube-apiserver
// (../../go.mod, v1.37). ../../../up --next --controllers starts it with the
// Job controller, which in v1.37 also makes Workloads and PodGroups.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	command := app.NewControllerManagerCommand()
	os.Exit(cli.Run(command))
}

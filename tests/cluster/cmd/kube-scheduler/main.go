// Command kube-scheduler is the upstream Kubernetes scheduler, built from the
// k8s.io/kubernetes Go module pinned in ../../go.mod. It is the same program
// as cmd/kube-scheduler in the Kubernetes repository; tests/e2e/twin.sh runs
// it (KB_TWIN_SCHEDULER=kube-scheduler) as the counterpart kube-batchd's
// pod affinity and topology spread are compared with.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	command := app.NewSchedulerCommand()
	os.Exit(cli.Run(command))
}

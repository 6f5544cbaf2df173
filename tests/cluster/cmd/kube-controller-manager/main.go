// Command kube-controller-manager is the upstream Kubernetes controller
// manager, built from the k8s.io/kubernetes Go module pinned in ../../go.mod
// (the same module as ../kube-apiserver, so the two share almost every
// package in the Go build cache). It is the same program as
// cmd/kube-controller-manager in the Kubernetes repository; ../../up starts
// it on 127.0.0.1 only with --controllers, running just the Deployment,
// ReplicaSet and Job controllers.
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

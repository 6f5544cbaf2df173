// The fault proxy and the gang invariant checker of the end-to-end tests
// (tests/e2e/faults.sh): the standard library only, so the build needs no
// download. Built by ./build into the cluster-bin cache, as
// tests/cluster/up builds its tools.
module kube-batchd.local/tests/faultproxy

go 1.24.0

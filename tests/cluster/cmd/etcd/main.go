// Command etcd is a single-member etcd 3.5 server embedded through
// go.etcd.io/etcd/server/v3/embed (the version k8s.io/kubernetes itself
// requires). It is only meant for the local control plane of kube-batchd's
// tests: it listens on loopback and, by default, does not fsync.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func parseURLs(flagName, s string) []url.URL {
	var out []url.URL
	for _, part := range strings.Split(s, ",") {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil || u.Host == "" {
			log.Fatalf("etcd: --%s: bad URL %q", flagName, part)
		}
		out = append(out, *u)
	}
	return out
}

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	name := flag.String("name", "default", "member name")
	clientURLs := flag.String("listen-client-urls", "http://127.0.0.1:2379", "comma-separated client URLs to listen on")
	peerURLs := flag.String("listen-peer-urls", "http://127.0.0.1:2380", "comma-separated peer URLs to listen on")
	fsync := flag.Bool("fsync", false, "fsync the WAL and backend (off: faster, fine for throw-away test clusters)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn, error")
	quota := flag.Int64("quota-backend-bytes", 2<<30, "backend size quota in bytes")
	readyTimeout := flag.Duration("ready-timeout", 60*time.Second, "how long to wait for the server to become ready")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		os.Exit(2)
	}

	cfg := embed.NewConfig()
	cfg.Name = *name
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = parseURLs("listen-client-urls", *clientURLs)
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.ListenPeerUrls = parseURLs("listen-peer-urls", *peerURLs)
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = !*fsync
	cfg.QuotaBackendBytes = *quota
	cfg.LogLevel = *logLevel
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{"stderr"}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: start: %v", err)
	}
	defer e.Close()

	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready, serving clients on %s\n", *clientURLs)
	case <-time.After(*readyTimeout):
		e.Server.Stop()
		log.Fatalf("etcd: not ready after %s", *readyTimeout)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "etcd: %s, shutting down\n", s)
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	}
}

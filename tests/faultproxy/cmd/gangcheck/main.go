// Command gangcheck reads the API server's own record of a test and checks
// the scheduler's invariants against it.
//
//	gangcheck record -server URL -ca FILE -token-file FILE -namespace NS -out FILE
//	    watches the namespace's Pods and kube-batch PodGroups and all Nodes
//	    (straight to the apiserver, never through the fault proxy) and
//	    writes one JSON line per observed state, with the time it was seen,
//	    until SIGTERM. A watch that ends is resumed from its
//	    resourceVersion; a 410 or an error relists.
//	gangcheck analyze -in FILE -clear UNIX_SECONDS -period DURATION [-until UNIX_SECONDS]
//	    checks the record (up to -until when given: later lines are left
//	    out, and a gang still below minMember at the end is counted until
//	    then, not until the last line) and prints one line per finding:
//	      "ok: ..." or "violation: ..." (exit 1 if any violation):
//	    - no pod (UID) bound to two nodes;
//	    - no pod bound to a node that was cordoned or deleted at least one
//	      period before the binding was seen;
//	    - no PodGroup with 0 < bound members < minMember for longer than one
//	      period after -clear (the time the last fault was removed);
//	    - every pod that exists at the end is bound, or has the condition
//	      PodScheduled=False with a message (a reason).
//
// Errors: a flag missing or a file unreadable ends with exit 2 and a message
// naming it. Cost: record keeps one connection per watched kind; analyze is
// O(lines log lines).
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Record is one observed state of one object.
type Record struct {
	T        float64 `json:"t"` // unix seconds when seen
	Kind     string  `json:"kind"`
	Type     string  `json:"type"` // ADDED, MODIFIED, DELETED, LISTED
	Name     string  `json:"name"`
	UID      string  `json:"uid"`
	Node     string  `json:"node,omitempty"`      // pods: spec.nodeName
	Group    string  `json:"group,omitempty"`     // pods: their PodGroup
	Deleting bool    `json:"deleting,omitempty"`  // deletionTimestamp set
	Reason   string  `json:"reason,omitempty"`    // pods: PodScheduled=False message
	Min      int     `json:"minMember,omitempty"` // podgroups
	Cordoned bool    `json:"cordoned,omitempty"`  // nodes
}

type objMeta struct {
	Name              string            `json:"name"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resourceVersion"`
	DeletionTimestamp *string           `json:"deletionTimestamp"`
	Annotations       map[string]string `json:"annotations"`
}

type object struct {
	Metadata objMeta `json:"metadata"`
	Spec     struct {
		NodeName      string `json:"nodeName"`
		MinMember     int    `json:"minMember"`
		Unschedulable bool   `json:"unschedulable"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

func toRecord(kind, typ string, o *object) Record {
	r := Record{T: float64(time.Now().UnixNano()) / 1e9, Kind: kind, Type: typ, Name: o.Metadata.Name,
		UID: o.Metadata.UID, Deleting: o.Metadata.DeletionTimestamp != nil}
	switch kind {
	case "Pod":
		r.Node = o.Spec.NodeName
		r.Group = o.Metadata.Annotations["scheduling.k8s.io/group-name"]
		for _, c := range o.Status.Conditions {
			if c.Type == "PodScheduled" && c.Status == "False" {
				r.Reason = c.Message
			}
		}
	case "PodGroup":
		r.Min = o.Spec.MinMember
	case "Node":
		r.Cordoned = o.Spec.Unschedulable
	}
	return r
}

type recorder struct {
	server, token string
	client        *http.Client
	mu            sync.Mutex
	out           *bufio.Writer
}

func (rc *recorder) emit(r Record) {
	b, _ := json.Marshal(r)
	rc.mu.Lock()
	_, _ = rc.out.Write(append(b, '\n'))
	_ = rc.out.Flush()
	rc.mu.Unlock()
}

func (rc *recorder) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rc.server+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+rc.token)
	return rc.client.Do(req)
}

// follow lists then watches path until ctx ends.
func (rc *recorder) follow(ctx context.Context, kind, path string) {
	for ctx.Err() == nil {
		resp, err := rc.get(ctx, path)
		if err != nil {
			log.Printf("gangcheck: LIST %s: %v", path, err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		var list struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
			Items []object `json:"items"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			log.Printf("gangcheck: LIST %s: status %d %v", path, resp.StatusCode, err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for i := range list.Items {
			rc.emit(toRecord(kind, "LISTED", &list.Items[i]))
		}
		rv := list.Metadata.ResourceVersion
		for ctx.Err() == nil {
			resp, err := rc.get(ctx, path+"?watch=1&allowWatchBookmarks=true&resourceVersion="+rv)
			if err != nil {
				break
			}
			if resp.StatusCode != 200 {
				resp.Body.Close()
				break
			}
			dec := json.NewDecoder(resp.Body)
			gone := false
			for {
				var ev struct {
					Type   string          `json:"type"`
					Object json.RawMessage `json:"object"`
				}
				if err := dec.Decode(&ev); err != nil {
					break
				}
				var o object
				if err := json.Unmarshal(ev.Object, &o); err != nil {
					continue
				}
				if ev.Type == "ERROR" {
					gone = true
					break
				}
				if o.Metadata.ResourceVersion != "" {
					rv = o.Metadata.ResourceVersion
				}
				if ev.Type != "BOOKMARK" {
					rc.emit(toRecord(kind, ev.Type, &o))
				}
			}
			resp.Body.Close()
			if gone {
				break
			}
		}
	}
}

func record(args []string) {
	fs := flag.NewFlagSet("record", flag.ExitOnError)
	server := fs.String("server", "", "the apiserver URL")
	ca := fs.String("ca", "", "its CA (PEM)")
	tokenFile := fs.String("token-file", "", "a bearer token that may watch pods, podgroups, nodes")
	ns := fs.String("namespace", "", "the namespace of the test")
	out := fs.String("out", "", "the record (JSON lines)")
	_ = fs.Parse(args)
	if *server == "" || *ca == "" || *tokenFile == "" || *ns == "" || *out == "" {
		log.Print("gangcheck record: -server, -ca, -token-file, -namespace and -out are required")
		os.Exit(2)
	}
	pem, err := os.ReadFile(*ca)
	if err != nil {
		log.Printf("gangcheck record: -ca: %v", err)
		os.Exit(2)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		log.Printf("gangcheck record: -ca %s: no certificate", *ca)
		os.Exit(2)
	}
	tok, err := os.ReadFile(*tokenFile)
	if err != nil {
		log.Printf("gangcheck record: -token-file: %v", err)
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Printf("gangcheck record: -out: %v", err)
		os.Exit(2)
	}
	defer f.Close()
	rc := &recorder{server: strings.TrimRight(*server, "/"), token: strings.TrimSpace(string(tok)),
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
		out:    bufio.NewWriter(f)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for kind, path := range map[string]string{
		"Pod":      "/api/v1/namespaces/" + *ns + "/pods",
		"PodGroup": "/apis/scheduling.incubator.k8s.io/v1alpha1/namespaces/" + *ns + "/podgroups",
		"Node":     "/api/v1/nodes",
	} {
		wg.Add(1)
		go func() { defer wg.Done(); rc.follow(ctx, kind, path) }()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	cancel()
	wg.Wait()
}

// ---- analyze -----------------------------------------------------------------------

func analyze(args []string) int {
	fs := flag.NewFlagSet("analyze", flag.ExitOnError)
	in := fs.String("in", "", "the record")
	clear := fs.Float64("clear", 0, "unix time the last fault was removed")
	period := fs.Duration("period", time.Second, "the scheduler's --schedule-period")
	until := fs.Float64("until", 0, "unix time the record is cut at (0: its last line)")
	_ = fs.Parse(args)
	f, err := os.Open(*in)
	if err != nil {
		log.Printf("gangcheck analyze: -in: %v", err)
		return 2
	}
	defer f.Close()
	var recs []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			log.Printf("gangcheck analyze: %s: %v", *in, err)
			return 2
		}
		recs = append(recs, r)
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].T < recs[j].T })
	return check(os.Stdout, recs, *clear, period.Seconds(), *until)
}

type podState struct {
	rec   Record
	gone  bool
	nodes map[string]bool
}

// check judges recs (sorted by time); until > 0 cuts them there and ends
// the stretches still open at that time rather than at the last record.
func check(w io.Writer, recs []Record, clear, period, until float64) int {
	violations := 0
	bad := func(format string, a ...any) {
		violations++
		fmt.Fprintf(w, "violation: "+format+"\n", a...)
	}
	pods := map[string]*podState{} // by UID
	minOf := map[string]int{}      // group -> minMember
	type nodeState struct {
		cordoned, gone     bool
		cordonedAt, goneAt float64
	}
	nodes := map[string]*nodeState{}
	below := map[string]float64{} // group -> since when 0 < bound < min
	worst := map[string]float64{} // group -> longest stretch past clear
	bound := func(group string) int {
		n := 0
		for _, p := range pods {
			if !p.gone && !p.rec.Deleting && p.rec.Group == group && p.rec.Node != "" {
				n++
			}
		}
		return n
	}
	update := func(group string, t float64) {
		min, ok := minOf[group]
		if !ok || min <= 0 {
			return
		}
		n := bound(group)
		if n > 0 && n < min {
			if _, in := below[group]; !in {
				below[group] = t
			}
			return
		}
		if since, in := below[group]; in {
			from := since
			if from < clear {
				from = clear
			}
			if t-from > worst[group] {
				worst[group] = t - from
			}
			delete(below, group)
		}
	}
	var last float64
	for _, r := range recs {
		if until > 0 && r.T > until {
			break
		}
		last = r.T
		switch r.Kind {
		case "Node":
			ns := nodes[r.Name]
			if ns == nil {
				ns = &nodeState{}
				nodes[r.Name] = ns
			}
			if r.Type == "DELETED" {
				ns.gone, ns.goneAt = true, r.T
			} else {
				ns.gone = false
				if r.Cordoned && !ns.cordoned {
					ns.cordonedAt = r.T
				}
				ns.cordoned = r.Cordoned
			}
		case "PodGroup":
			if r.Type != "DELETED" {
				minOf[r.Name] = r.Min
			}
			update(r.Name, r.T)
		case "Pod":
			p := pods[r.UID]
			if p == nil {
				p = &podState{nodes: map[string]bool{}}
				pods[r.UID] = p
			}
			if r.Node != "" && !p.nodes[r.Node] {
				if len(p.nodes) > 0 {
					bad("pod %s (uid %s) bound to %s after %v", r.Name, r.UID, r.Node, keys(p.nodes))
				}
				p.nodes[r.Node] = true
				if ns := nodes[r.Node]; ns != nil && r.Type != "LISTED" {
					if ns.cordoned && r.T-ns.cordonedAt > period {
						bad("pod %s bound to node %s %.2fs after the node was cordoned", r.Name, r.Node, r.T-ns.cordonedAt)
					}
					if ns.gone && r.T-ns.goneAt > period {
						bad("pod %s bound to node %s %.2fs after the node was deleted", r.Name, r.Node, r.T-ns.goneAt)
					}
				}
			}
			p.rec = r
			p.gone = r.Type == "DELETED"
			if r.Group != "" {
				update(r.Group, r.T)
			}
		}
	}
	if until > 0 {
		last = until
	}
	for g, since := range below {
		from := since
		if from < clear {
			from = clear
		}
		if last-from > worst[g] {
			worst[g] = last - from
		}
	}
	groups := make([]string, 0, len(minOf))
	for g := range minOf {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		if worst[g] > period {
			bad("PodGroup %s ran below minMember %d for %.2fs after the fault cleared (period %.2fs)", g, minOf[g], worst[g], period)
		} else {
			fmt.Fprintf(w, "ok: PodGroup %s below minMember %d at most %.2fs after the fault cleared, bound %d at the end\n", g, minOf[g], worst[g], bound(g))
		}
	}
	names := make([]string, 0, len(pods))
	byName := map[string]*podState{}
	for _, p := range pods {
		if p.gone {
			continue
		}
		names = append(names, p.rec.Name)
		byName[p.rec.Name] = p
	}
	sort.Strings(names)
	pending := 0
	for _, n := range names {
		p := byName[n]
		if p.rec.Node != "" {
			continue
		}
		pending++
		if p.rec.Reason == "" {
			bad("pod %s is pending without a reason (no PodScheduled=False message)", n)
		}
	}
	fmt.Fprintf(w, "ok: %d pods at the end, %d pending, %d records\n", len(names), pending, len(recs))
	if violations > 0 {
		return 1
	}
	return 0
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func main() {
	log.SetFlags(0)
	if len(os.Args) < 2 {
		log.Print("usage: gangcheck record|analyze FLAGS")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "record":
		record(os.Args[2:])
	case "analyze":
		os.Exit(analyze(os.Args[2:]))
	default:
		log.Printf("gangcheck: %q: not record or analyze", os.Args[1])
		os.Exit(2)
	}
}

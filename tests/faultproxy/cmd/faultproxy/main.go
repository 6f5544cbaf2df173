// Command faultproxy stands between kube-batchd and the real kube-apiserver
// of the local control plane (tests/cluster/up) and misbehaves on command.
//
// It terminates TLS with a certificate the daemon's kubeconfig trusts (the
// test makes a CA for it), and re-originates every request over TLS to the
// apiserver, verified against the control plane's CA. The daemon's own
// bearer token passes through untouched, so the apiserver authorises the
// scheduler's real account. HTTP/2 is served as the apiserver serves it
// (-http1 forces HTTP/1.1).
//
// Faults are rules: a match (class, method, path and query regexps) and an
// action. Rules come from -rules FILE at start and from the control
// endpoint (-control ADDR) at any time; a rule with "prob" fires on a draw
// from one generator seeded with -seed, so a schedule of random faults is
// the same sequence of draws for the same seed. The first matching rule
// that fires decides a request; the others are not consulted.
//
// Classes: bind (POST pods/NAME/binding), evict (POST pods/NAME/eviction),
// status (PATCH/PUT .../status, and PATCH/PUT of a podgroup), event
// (events), lease (coordination.k8s.io), watch (GET ?watch=1), list (GET of
// a collection), get (other GETs), write (other writes).
//
// Actions:
//
//	status      answer "code" (a metav1 Status body, "reason", "message";
//	            "retryAfter" sets Retry-After) without forwarding: the
//	            apiserver never sees the request
//	gone        status 410 reason Expired (a LIST or a WATCH)
//	gone-event  a watch answered 200 with one ERROR event carrying a 410
//	            Status, then ended, as the apiserver does for an expired
//	            resourceVersion
//	reset       the client's TCP connection reset (RST): before forwarding
//	            when no threshold is given, else after "afterBytes" body
//	            bytes, "afterLines" lines (watch events) or "after" (a
//	            duration) of the answer; "lost": forward, let the apiserver
//	            act, then reset instead of answering (a bind that happened
//	            but whose answer never came)
//	end         the answer ended cleanly after a threshold as for reset (a
//	            watch ended early)
//	delay       wait "delay", then forward
//	stall       read the request and answer nothing for "delay" (0: until
//	            the rule is removed or the client goes), then reset
//	pass        forward, counted (for counting requests of a class)
//
// "skip": let the first N matching requests through; "times": retire after
// firing N times (0: until removed); "prob": fire with that probability.
//
// Control endpoint (plain HTTP on loopback):
//
//	GET    /rules           the rules with their counts
//	POST   /rules           add a rule or an array of rules; answers the ids
//	DELETE /rules           remove every rule (stalled requests are released)
//	DELETE /rules/ID        remove one
//	POST   /reset           reset every open client connection now
//	GET    /stats           requests per class, faults per class and action,
//	                        answers per class and status
//	GET    /healthz         "ok"
//
// Errors: a bad flag, certificate or rules file ends the program with a
// message naming it (exit 2); a bad rule posted is answered 400 naming the
// field. Cost: one goroutine per request; bodies are streamed in 32 KiB
// reads and flushed as they come, never buffered whole.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Duration is a time.Duration that reads "300ms" from JSON.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"300ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Rule is one fault: what it matches and what it does.
type Rule struct {
	ID         int      `json:"id"`
	Class      string   `json:"class,omitempty"`
	Method     string   `json:"method,omitempty"`
	Path       string   `json:"path,omitempty"`
	Query      string   `json:"query,omitempty"`
	Skip       int      `json:"skip,omitempty"`
	Times      int      `json:"times,omitempty"`
	Prob       float64  `json:"prob,omitempty"`
	Action     string   `json:"action"`
	Code       int      `json:"code,omitempty"`
	RetryAfter string   `json:"retryAfter,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Message    string   `json:"message,omitempty"`
	Delay      Duration `json:"delay,omitempty"`
	AfterBytes int64    `json:"afterBytes,omitempty"`
	AfterLines int      `json:"afterLines,omitempty"`
	After      Duration `json:"after,omitempty"`
	Lost       bool     `json:"lost,omitempty"`
	Matched    int      `json:"matched"`
	Fired      int      `json:"fired"`

	pathRe, queryRe *regexp.Regexp
	removed         chan struct{}
}

var classes = map[string]bool{"": true, "any": true, "bind": true, "evict": true, "status": true,
	"event": true, "lease": true, "watch": true, "list": true, "get": true, "write": true}
var actions = map[string]bool{"status": true, "gone": true, "gone-event": true, "reset": true,
	"end": true, "delay": true, "stall": true, "pass": true}

func (r *Rule) compile() error {
	if !classes[r.Class] {
		return fmt.Errorf("rule: class %q: not one of bind, evict, status, event, lease, watch, list, get, write, any", r.Class)
	}
	if !actions[r.Action] {
		return fmt.Errorf("rule: action %q: not one of status, gone, gone-event, reset, end, delay, stall, pass", r.Action)
	}
	if r.Action == "status" && (r.Code < 100 || r.Code > 599) {
		return fmt.Errorf("rule: code %d: action status needs an HTTP status 100..599", r.Code)
	}
	if r.Prob < 0 || r.Prob > 1 {
		return fmt.Errorf("rule: prob %g: must be in [0, 1]", r.Prob)
	}
	if r.Skip < 0 || r.Times < 0 || r.AfterBytes < 0 || r.AfterLines < 0 {
		return errors.New("rule: skip, times, afterBytes and afterLines must be >= 0")
	}
	var err error
	if r.Path != "" {
		if r.pathRe, err = regexp.Compile(r.Path); err != nil {
			return fmt.Errorf("rule: path: %w", err)
		}
	}
	if r.Query != "" {
		if r.queryRe, err = regexp.Compile(r.Query); err != nil {
			return fmt.Errorf("rule: query: %w", err)
		}
	}
	r.removed = make(chan struct{})
	return nil
}

func (r *Rule) hasThreshold() bool { return r.AfterBytes > 0 || r.AfterLines > 0 || r.After > 0 }

// classify names what a request does in the API's terms.
func classify(req *http.Request) string {
	path := req.URL.Path
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/v1/"):
		rest = path[len("/api/v1/"):]
	case strings.HasPrefix(path, "/apis/"):
		parts := strings.SplitN(path[len("/apis/"):], "/", 3)
		if len(parts) < 3 {
			return "get"
		}
		if parts[0] == "coordination.k8s.io" {
			return "lease"
		}
		rest = parts[2]
	default:
		if req.Method == http.MethodGet {
			return "get"
		}
		return "write"
	}
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	resource, name, sub := segs[0], "", ""
	if len(segs) > 1 {
		name = segs[1]
	}
	if len(segs) > 2 {
		sub = segs[2]
	}
	q := req.URL.Query()
	switch {
	case resource == "events":
		return "event"
	case req.Method == http.MethodPost && resource == "pods" && sub == "binding":
		return "bind"
	case req.Method == http.MethodPost && resource == "pods" && sub == "eviction":
		return "evict"
	case (req.Method == http.MethodPatch || req.Method == http.MethodPut) &&
		(sub == "status" || resource == "podgroups"):
		return "status"
	case req.Method == http.MethodGet && (q.Get("watch") == "1" || q.Get("watch") == "true"):
		return "watch"
	case req.Method == http.MethodGet && name == "":
		return "list"
	case req.Method == http.MethodGet:
		return "get"
	}
	return "write"
}

type proxy struct {
	upstream string
	client   *http.Client

	mu     sync.Mutex
	rules  []*Rule
	nextID int
	rng    *rand.Rand
	conns  map[net.Conn]struct{}
	stats  struct {
		Requests map[string]int `json:"requests"`
		Faults   map[string]int `json:"faults"`
		Answers  map[string]int `json:"answers"`
	}
	logw io.Writer
}

type connKey struct{}

func (p *proxy) count(m map[string]int, k string) {
	p.mu.Lock()
	m[k]++
	p.mu.Unlock()
}

func (p *proxy) logf(format string, args ...any) {
	if p.logw == nil {
		return
	}
	line := time.Now().UTC().Format("15:04:05.000 ") + fmt.Sprintf(format, args...) + "\n"
	p.mu.Lock()
	_, _ = io.WriteString(p.logw, line)
	p.mu.Unlock()
}

// pick returns the rule that fires for req, or nil.
func (p *proxy) pick(req *http.Request, class string) *Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if r.Class != "" && r.Class != "any" && r.Class != class {
			continue
		}
		if r.Method != "" && !strings.EqualFold(r.Method, req.Method) {
			continue
		}
		if r.pathRe != nil && !r.pathRe.MatchString(req.URL.Path) {
			continue
		}
		if r.queryRe != nil && !r.queryRe.MatchString(req.URL.RawQuery) {
			continue
		}
		if r.Times > 0 && r.Fired >= r.Times {
			continue
		}
		r.Matched++
		if r.Matched <= r.Skip {
			continue
		}
		if r.Prob > 0 && r.Prob < 1 && p.rng.Float64() >= r.Prob {
			continue
		}
		r.Fired++
		return r
	}
	return nil
}

var reasons = map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
	409: "Conflict", 410: "Expired", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
	503: "ServiceUnavailable", 504: "Timeout"}

func statusBody(code int, reason, msg string) []byte {
	if reason == "" {
		reason = reasons[code]
	}
	b, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": reason, "code": code})
	return b
}

// resetConn ends the client's connection with a TCP RST.
func resetConn(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.Close()
}

var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (p *proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	class := classify(req)
	p.count(p.stats.Requests, class)
	conn, _ := req.Context().Value(connKey{}).(net.Conn)
	what := req.Method + " " + req.URL.RequestURI()
	r := p.pick(req, class)
	if r != nil {
		p.count(p.stats.Faults, class+"/"+r.Action)
	}
	if r != nil {
		switch r.Action {
		case "status", "gone":
			code := r.Code
			if r.Action == "gone" {
				code = 410
			}
			msg := r.Message
			if msg == "" {
				msg = fmt.Sprintf("faultproxy: injected %d (rule %d)", code, r.ID)
			}
			if r.RetryAfter != "" {
				w.Header().Set("Retry-After", r.RetryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = w.Write(statusBody(code, r.Reason, msg))
			p.count(p.stats.Answers, fmt.Sprintf("%s/%d", class, code))
			p.logf("%s %s -> %d (rule %d)", class, what, code, r.ID)
			return
		case "gone-event":
			ev, _ := json.Marshal(map[string]any{"type": "ERROR", "object": json.RawMessage(
				statusBody(410, "Expired", "faultproxy: too old resource version (injected)"))})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = w.Write(append(ev, '\n'))
			p.count(p.stats.Answers, class+"/200")
			p.logf("%s %s -> ERROR event 410 (rule %d)", class, what, r.ID)
			return
		case "reset":
			if !r.hasThreshold() && !r.Lost {
				p.logf("%s %s -> reset before forwarding (rule %d)", class, what, r.ID)
				if conn != nil {
					resetConn(conn)
				}
				panic(http.ErrAbortHandler)
			}
		case "delay":
			p.logf("%s %s -> delayed %s (rule %d)", class, what, time.Duration(r.Delay), r.ID)
			select {
			case <-time.After(time.Duration(r.Delay)):
			case <-req.Context().Done():
				return
			}
		case "stall":
			p.logf("%s %s -> stalled (rule %d)", class, what, r.ID)
			var limit <-chan time.Time
			if r.Delay > 0 {
				limit = time.After(time.Duration(r.Delay))
			}
			select {
			case <-limit:
			case <-r.removed:
			case <-req.Context().Done():
			}
			if conn != nil {
				resetConn(conn)
			}
			panic(http.ErrAbortHandler)
		}
	}
	p.forward(w, req, class, what, conn, r)
}

func (p *proxy) forward(w http.ResponseWriter, req *http.Request, class, what string, conn net.Conn, r *Rule) {
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, req.Method, p.upstream+req.URL.RequestURI(), req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.ContentLength = req.ContentLength
	if req.ContentLength == 0 {
		out.Body = http.NoBody
	}
	for k, vs := range req.Header {
		out.Header[k] = append([]string(nil), vs...)
	}
	for _, h := range hopByHop {
		out.Header.Del(h)
	}
	resp, err := p.client.Do(out)
	if err != nil {
		p.logf("%s %s -> upstream error: %v", class, what, err)
		p.count(p.stats.Answers, class+"/502")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write(statusBody(502, "InternalError", "faultproxy: apiserver unreachable: "+err.Error()))
		return
	}
	defer resp.Body.Close()
	p.count(p.stats.Answers, fmt.Sprintf("%s/%d", class, resp.StatusCode))
	if r != nil && r.Action == "reset" && r.Lost {
		_, _ = io.Copy(io.Discard, resp.Body)
		p.logf("%s %s -> apiserver said %d, answer lost: reset (rule %d)", class, what, resp.StatusCode, r.ID)
		if conn != nil {
			resetConn(conn)
		}
		panic(http.ErrAbortHandler)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	for _, h := range hopByHop {
		w.Header().Del(h)
	}
	cut := r != nil && (r.Action == "reset" || r.Action == "end") && r.hasThreshold()
	if cut {
		// A clean early end cannot keep a Content-Length promise.
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	var fired sync.Once
	doCut := func(why string) {
		fired.Do(func() {
			if r.Action == "reset" {
				p.logf("%s %s -> reset after %s (rule %d)", class, what, why, r.ID)
				if conn != nil {
					// A receiver drops what it has not read when the RST
					// comes: give the bytes sent a moment to be read.
					time.Sleep(100 * time.Millisecond)
					resetConn(conn)
				}
			} else {
				p.logf("%s %s -> ended after %s (rule %d)", class, what, why, r.ID)
			}
			cancel()
		})
	}
	if cut && r.After > 0 {
		t := time.AfterFunc(time.Duration(r.After), func() { doCut(time.Duration(r.After).String()) })
		defer t.Stop()
	}
	buf := make([]byte, 32<<10)
	var sent int64
	lines := 0
	for {
		n, rerr := resp.Body.Read(buf)
		chunk := buf[:n]
		if cut && r.AfterBytes > 0 && sent+int64(len(chunk)) >= r.AfterBytes {
			chunk = chunk[:r.AfterBytes-sent]
		}
		if cut && r.AfterLines > 0 {
			for i, b := range chunk {
				if b == '\n' {
					lines++
					if lines == r.AfterLines {
						chunk = chunk[:i+1]
						break
					}
				}
			}
		}
		if len(chunk) > 0 {
			if _, werr := w.Write(chunk); werr != nil {
				return
			}
			sent += int64(len(chunk))
			if fl != nil {
				fl.Flush()
			}
		}
		if cut && ((r.AfterBytes > 0 && sent >= r.AfterBytes) || (r.AfterLines > 0 && lines >= r.AfterLines)) {
			doCut(fmt.Sprintf("%d bytes, %d lines", sent, lines))
			if r.Action == "reset" {
				panic(http.ErrAbortHandler)
			}
			return
		}
		if rerr != nil {
			if cut && r.Action == "reset" && ctx.Err() != nil {
				panic(http.ErrAbortHandler)
			}
			return
		}
	}
}

// ---- control endpoint --------------------------------------------------------------

func (p *proxy) addRules(body []byte) ([]int, error) {
	var many []*Rule
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal(body, &many); err != nil {
			return nil, fmt.Errorf("rules: %w", err)
		}
	} else {
		var one Rule
		if err := json.Unmarshal(body, &one); err != nil {
			return nil, fmt.Errorf("rule: %w", err)
		}
		many = []*Rule{&one}
	}
	for i, r := range many {
		if err := r.compile(); err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]int, 0, len(many))
	for _, r := range many {
		p.nextID++
		r.ID = p.nextID
		r.Matched, r.Fired = 0, 0
		p.rules = append(p.rules, r)
		ids = append(ids, r.ID)
	}
	return ids, nil
}

func (p *proxy) removeRules(id int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.rules[:0]
	n := 0
	for _, r := range p.rules {
		if id == 0 || r.ID == id {
			close(r.removed)
			n++
			continue
		}
		kept = append(kept, r)
	}
	p.rules = kept
	return n
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (p *proxy) control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /rules", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		writeJSON(w, p.rules)
	})
	mux.HandleFunc("POST /rules", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err == nil {
			var ids []int
			if ids, err = p.addRules(body); err == nil {
				for _, id := range ids {
					p.logf("control: rule %d added", id)
				}
				writeJSON(w, ids)
				return
			}
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
	})
	mux.HandleFunc("DELETE /rules", func(w http.ResponseWriter, _ *http.Request) {
		n := p.removeRules(0)
		p.logf("control: %d rules removed", n)
		writeJSON(w, n)
	})
	mux.HandleFunc("DELETE /rules/{id}", func(w http.ResponseWriter, req *http.Request) {
		id, err := strconv.Atoi(req.PathValue("id"))
		if err != nil || id <= 0 {
			http.Error(w, "rule id: a positive number", http.StatusBadRequest)
			return
		}
		if p.removeRules(id) == 0 {
			http.Error(w, fmt.Sprintf("rule %d: no such rule", id), http.StatusNotFound)
			return
		}
		p.logf("control: rule %d removed", id)
		writeJSON(w, 1)
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		conns := make([]net.Conn, 0, len(p.conns))
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		for _, c := range conns {
			resetConn(c)
		}
		p.logf("control: %d connections reset", len(conns))
		writeJSON(w, len(conns))
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		writeJSON(w, p.stats)
	})
	return mux
}

// ---- main --------------------------------------------------------------------------

func writeAddr(file string, addr net.Addr) {
	if file == "" {
		return
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(addr.String()+"\n"), 0o644); err != nil {
		log.Fatalf("faultproxy: %s: %v", file, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		log.Fatalf("faultproxy: %s: %v", file, err)
	}
}

func main() {
	log.SetFlags(0)
	listen := flag.String("listen", "127.0.0.1:0", "address the daemon connects to (TLS)")
	addrFile := flag.String("addr-file", "", "write the listening address here once listening")
	controlAddr := flag.String("control", "127.0.0.1:0", "address of the control endpoint (plain HTTP)")
	controlFile := flag.String("control-file", "", "write the control address here once listening")
	upstream := flag.String("upstream", "", "the apiserver, https://127.0.0.1:PORT")
	upstreamCA := flag.String("upstream-ca", "", "PEM CA that signed the apiserver's certificate")
	certFile := flag.String("cert", "", "PEM certificate served to the daemon")
	keyFile := flag.String("key", "", "PEM key of -cert")
	rulesFile := flag.String("rules", "", "JSON rule or array of rules in force from the start")
	seed := flag.Uint64("seed", 1, "seed of the generator behind rules with prob")
	logFile := flag.String("log", "", "one line per fault and control action")
	http1 := flag.Bool("http1", false, "serve HTTP/1.1 only (default: HTTP/2 where the client offers it)")
	flag.Parse()
	if *upstream == "" || *upstreamCA == "" || *certFile == "" || *keyFile == "" {
		log.Print("faultproxy: -upstream, -upstream-ca, -cert and -key are required")
		flag.Usage()
		os.Exit(2)
	}
	caPEM, err := os.ReadFile(*upstreamCA)
	if err != nil {
		log.Fatalf("faultproxy: -upstream-ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		log.Fatalf("faultproxy: -upstream-ca %s: no PEM certificate in it", *upstreamCA)
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("faultproxy: -cert/-key: %v", err)
	}
	p := &proxy{
		upstream: strings.TrimRight(*upstream, "/"),
		client: &http.Client{Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:   true,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}},
		rng:   rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15)),
		conns: map[net.Conn]struct{}{},
	}
	p.stats.Requests, p.stats.Faults, p.stats.Answers = map[string]int{}, map[string]int{}, map[string]int{}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("faultproxy: -log: %v", err)
		}
		defer f.Close()
		p.logw = f
	}
	if *rulesFile != "" {
		body, err := os.ReadFile(*rulesFile)
		if err != nil {
			log.Fatalf("faultproxy: -rules: %v", err)
		}
		if _, err := p.addRules(body); err != nil {
			log.Fatalf("faultproxy: -rules %s: %v", *rulesFile, err)
		}
	}
	tcpLn, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("faultproxy: -listen: %v", err)
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if *http1 {
		tlsCfg.NextProtos = []string{"http/1.1"}
	} else {
		tlsCfg.NextProtos = []string{"h2", "http/1.1"}
	}
	srv := &http.Server{
		Handler:     p,
		ErrorLog:    log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState: func(c net.Conn, s http.ConnState) {
			p.mu.Lock()
			defer p.mu.Unlock()
			switch s {
			case http.StateNew:
				p.conns[c] = struct{}{}
			case http.StateClosed, http.StateHijacked:
				delete(p.conns, c)
			}
		},
	}
	if *http1 {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	ctlLn, err := net.Listen("tcp", *controlAddr)
	if err != nil {
		log.Fatalf("faultproxy: -control: %v", err)
	}
	ctl := &http.Server{Handler: p.control(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ctl.Serve(ctlLn) }()
	go func() {
		if err := srv.Serve(tls.NewListener(tcpLn, tlsCfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatalf("faultproxy: serve: %v", err)
		}
	}()
	writeAddr(*addrFile, tcpLn.Addr())
	writeAddr(*controlFile, ctlLn.Addr())
	p.logf("listening on %s (control %s), upstream %s, seed %d", tcpLn.Addr(), ctlLn.Addr(), p.upstream, *seed)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	_ = ctl.Close()
	_ = srv.Close()
}

// h3-load: a closed-loop HTTP/3 load generator on quic-go, for the native engine's HTTP/3 (the
// h2load of baseline-h3 and static-h3: Debian's h2load is built without ngtcp2). -c connections,
// each connected first (a GET each), then each with -m streams in flight (a new request as soon as
// one is answered), for -d after a -w warm-up; prints one JSON line: requests answered in the measured window, rps, bytes, latency,
// errors, statuses.
//
//	h3-load -url 'https://127.0.0.1:8443/baseline2?a=1&b=1' -c 64 -m 64 -d 10s -expect-body 2
//	h3-load -i uris.txt -H 'Accept-Encoding: br;q=1, gzip;q=0.8' -c 64 -m 64 -d 10s
//	h3-load -once -i uris.txt     one GET of each URL, each answer printed (status, headers, body)
//
// With -i each connection asks for the file's URLs in turn, as h2load -i does. Every answer is
// checked: its status must be -expect-status, its body as long as its Content-Length says, and
// -expect-body when given; a wrong answer is counted in "wrong", the first is printed on stderr,
// and the run exits with 1, so a server that answers fast but wrong is never timed.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

type result struct {
	Requests int64         `json:"requests"`
	Seconds  float64       `json:"seconds"`
	RPS      float64       `json:"rps"`
	Bytes    int64         `json:"bytes"`
	MeanUs   float64       `json:"meanUs"`
	P99Us    float64       `json:"p99Us"`
	Errors   int64         `json:"errors"`
	Wrong    int64         `json:"wrong"`
	Statuses map[int]int64 `json:"statuses"`
	Conns    int           `json:"connections"`
	Streams  int           `json:"streamsPerConnection"`
	URLs     int           `json:"urls"`
}

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

// check says what is wrong with an answer, or "".
type check struct {
	status int
	body   *string
}

func (c check) problem(url string, res *http.Response, body []byte) string {
	if res.StatusCode != c.status {
		return fmt.Sprintf("GET %s: status %d, expected %d", url, res.StatusCode, c.status)
	}
	if length := res.Header.Get("Content-Length"); length != "" && length != strconv.Itoa(len(body)) {
		return fmt.Sprintf("GET %s: %d bytes of body, but Content-Length says %s", url, len(body), length)
	}
	if c.body != nil && string(body) != *c.body {
		return fmt.Sprintf("GET %s: body %q, expected %q", url, truncate(body), *c.body)
	}
	return ""
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

func urlsFrom(one, file string) ([]string, error) {
	if file == "" {
		if one == "" {
			return nil, errors.New("-url or -i is required")
		}
		return []string{one}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var urls []string
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if line := strings.TrimSpace(lines.Text()); line != "" {
			urls = append(urls, line)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%s lists no URL", file)
	}
	return urls, lines.Err()
}

func newRequest(ctx context.Context, url string, extra headers) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for _, h := range extra {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return req, nil
}

func newClient() *http.Client {
	// One transport per connection: quic-go's http3.Transport keeps one QUIC connection a host.
	// The bodies are counted as they come (compressed, when the server compressed them).
	return &http.Client{Transport: &http3.Transport{
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}},
		QUICConfig:         &quic.Config{MaxIncomingStreams: 1 << 16},
		DisableCompression: true,
	}}
}

// once GETs each URL once and prints the answers: the bench's check before it times a server.
func once(urls []string, extra headers) {
	client := newClient()
	type answer struct {
		URL     string            `json:"url"`
		Status  int               `json:"status"`
		Proto   string            `json:"proto"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
		Error   string            `json:"error,omitempty"`
	}
	out := []answer{}
	for _, url := range urls {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := newRequest(ctx, url, extra)
		if err != nil {
			fmt.Fprintln(os.Stderr, "h3-load:", err)
			os.Exit(2)
		}
		res, err := client.Do(req)
		if err != nil {
			out = append(out, answer{URL: url, Error: err.Error()})
			cancel()
			continue
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		a := answer{URL: url, Status: res.StatusCode, Proto: res.Proto, Headers: map[string]string{}, Body: string(body)}
		if err != nil {
			a.Error = err.Error()
		}
		for name := range res.Header {
			a.Headers[strings.ToLower(name)] = res.Header.Get(name)
		}
		out = append(out, a)
	}
	printed, _ := json.Marshal(out)
	fmt.Println(string(printed))
}

func main() {
	url := flag.String("url", "", "an https:// URL served over HTTP/3")
	file := flag.String("i", "", "a file of URLs, one a line, each connection asking for them in turn (h2load -i)")
	conns := flag.Int("c", 1, "connections")
	streams := flag.Int("m", 16, "streams in flight on each connection")
	duration := flag.Duration("d", 10*time.Second, "measured time")
	warmup := flag.Duration("w", 2*time.Second, "warm-up before the measured time")
	expectStatus := flag.Int("expect-status", 200, "the status every answer must have")
	expectBody := flag.String("expect-body", "", "the body every answer must have (unchecked when empty)")
	onlyOnce := flag.Bool("once", false, "GET each URL once and print the answers as JSON")
	var extra headers
	flag.Var(&extra, "H", `a request header, "Name: value" (repeatable)`)
	flag.Parse()
	urls, err := urlsFrom(*url, *file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h3-load:", err)
		os.Exit(2)
	}
	if *onlyOnce {
		once(urls, extra)
		return
	}
	want := check{status: *expectStatus}
	if *expectBody != "" {
		want.body = expectBody
	}
	var measuring atomic.Bool
	var answered, errorCount, wrong, bytes atomic.Int64
	var firstWrong atomic.Pointer[string]
	var mu sync.Mutex
	statuses := map[int]int64{}
	var latencies []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	// Every connection's handshake first, all at once (a GET each, its answer checked too): 64 QUIC
	// handshakes take the Go client a while on a loaded core, and the warm-up and measured time
	// are for requests, not for connecting.
	clients := make([]*http.Client, *conns)
	var connecting sync.WaitGroup
	for c := range clients {
		clients[c] = newClient()
		connecting.Add(1)
		go func() {
			defer connecting.Done()
			req, err := newRequest(ctx, urls[c%len(urls)], extra)
			if err != nil {
				panic(err)
			}
			if res, err := clients[c].Do(req); err == nil {
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if problem := want.problem(req.URL.String(), res, body); problem != "" {
					wrong.Add(1)
					firstWrong.CompareAndSwap(nil, &problem)
				}
			}
		}()
	}
	connecting.Wait()
	var wg sync.WaitGroup
	for c := 0; c < *conns; c++ {
		client := clients[c]
		// The streams of a connection share its place in the list of URLs, as h2load's do.
		var next atomic.Uint64
		next.Store(uint64(c))
		for s := 0; s < *streams; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				defer func() {
					mu.Lock()
					latencies = append(latencies, mine...)
					mu.Unlock()
				}()
				for ctx.Err() == nil {
					target := urls[(next.Add(1)-1)%uint64(len(urls))]
					req, err := newRequest(ctx, target, extra)
					if err != nil {
						panic(err)
					}
					started := time.Now()
					res, err := client.Do(req)
					if err != nil {
						if ctx.Err() == nil && measuring.Load() {
							errorCount.Add(1)
						}
						continue
					}
					body, err := io.ReadAll(res.Body)
					res.Body.Close()
					if err != nil {
						if ctx.Err() == nil && measuring.Load() {
							errorCount.Add(1)
						}
						continue
					}
					// Warm-up answers are checked too: only the count waits for the measured time.
					if problem := want.problem(target, res, body); problem != "" {
						wrong.Add(1)
						firstWrong.CompareAndSwap(nil, &problem)
					}
					if !measuring.Load() {
						continue
					}
					mine = append(mine, time.Since(started))
					answered.Add(1)
					bytes.Add(int64(len(body)))
					mu.Lock()
					statuses[res.StatusCode]++
					mu.Unlock()
				}
			}()
		}
	}
	time.Sleep(*warmup)
	measuring.Store(true)
	start := time.Now()
	time.Sleep(*duration)
	measuring.Store(false)
	seconds := time.Since(start).Seconds()
	n := answered.Load()
	cancel()
	wg.Wait()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	var mean, p99 float64
	if len(latencies) > 0 {
		var sum time.Duration
		for _, l := range latencies {
			sum += l
		}
		mean = float64(sum.Microseconds()) / float64(len(latencies))
		p99 = float64(latencies[min(len(latencies)-1, len(latencies)*99/100)].Microseconds())
	}
	out, _ := json.Marshal(result{
		Requests: n, Seconds: seconds, RPS: float64(n) / seconds, Bytes: bytes.Load(), MeanUs: mean, P99Us: p99,
		Errors: errorCount.Load(), Wrong: wrong.Load(), Statuses: statuses, Conns: *conns, Streams: *streams, URLs: len(urls),
	})
	fmt.Println(string(out))
	if first := firstWrong.Load(); first != nil {
		fmt.Fprintf(os.Stderr, "h3-load: %d wrong answers; the first: %s\n", wrong.Load(), *first)
		os.Exit(1)
	}
}

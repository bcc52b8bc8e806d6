// h3-load: a closed-loop HTTP/3 load generator on quic-go, for the native engine's HTTP/3 (the
// h2load of baseline-h3: Debian's h2load is built without ngtcp2). -c connections, each with -m
// streams in flight (a new request as soon as one is answered), for -d after a -w warm-up;
// prints one JSON line: requests answered in the measured window, rps, errors, statuses.
//
//	h3-load -url https://127.0.0.1:8443/baseline2?a=1&b=2 -c 4 -m 32 -d 10s
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
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
	Errors   int64         `json:"errors"`
	Statuses map[int]int64 `json:"statuses"`
	Conns    int           `json:"connections"`
	Streams  int           `json:"streamsPerConnection"`
}

func main() {
	url := flag.String("url", "", "an https:// URL served over HTTP/3")
	conns := flag.Int("c", 1, "connections")
	streams := flag.Int("m", 16, "streams in flight on each connection")
	duration := flag.Duration("d", 10*time.Second, "measured time")
	warmup := flag.Duration("w", 2*time.Second, "warm-up before the measured time")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "h3-load: -url is required")
		os.Exit(2)
	}
	var measuring atomic.Bool
	var answered, errors atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int64{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := 0; c < *conns; c++ {
		// One transport per connection: quic-go's http3.Transport keeps one QUIC connection a host.
		transport := &http3.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}},
			QUICConfig:      &quic.Config{MaxIncomingStreams: 1 << 16},
		}
		client := &http.Client{Transport: transport}
		for s := 0; s < *streams; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
					res, err := client.Do(req)
					if err != nil {
						if ctx.Err() == nil && measuring.Load() {
							errors.Add(1)
						}
						continue
					}
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if !measuring.Load() {
						continue
					}
					if err != nil {
						errors.Add(1)
						continue
					}
					answered.Add(1)
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
	out, _ := json.Marshal(result{Requests: n, Seconds: seconds, RPS: float64(n) / seconds, Errors: errors.Load(), Statuses: statuses, Conns: *conns, Streams: *streams})
	fmt.Println(string(out))
}

// ws-load: a WebSocket load generator for Cog's bench (bench/lib/websocket.mjs runs it).
//
//	ws-load -mode echo -url ws://127.0.0.1:3000/echo -c 512 -d 5s
//	    each connection sends "hello" and waits for its echo, again and again (HttpArena's echo-ws)
//	ws-load -mode echo -pipeline 16 ...
//	    each connection sends 16 "hello" frames in one write and waits for the 16 echoes
//	    (echo-ws-pipeline)
//	ws-load -mode echo -per-conn 10 ...
//	    each connection closes after 10 echoes and a new one is opened, handshake and all
//	    (echo-ws-limited)
//	ws-load -mode fanout -url ws://127.0.0.1:3000/fanout -c 1000 -d 5s
//	    c subscribers and one publisher; the server publishes what the publisher sends to every
//	    subscriber; the publisher keeps -window messages in flight (a message is done when every
//	    subscriber has it). Each message carries its send time: delivery latency per subscriber.
//
// It prints one JSON line: messages (echoes received, or deliveries), rate per second, latency
// percentiles in microseconds, errors.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	mode := flag.String("mode", "echo", "echo or fanout")
	target := flag.String("url", "", "ws:// URL")
	second := flag.String("url2", "", "fanout: a second server (another process sharing a broker): half the subscribers connect there")
	conns := flag.Int("c", 512, "connections (fanout: subscribers)")
	duration := flag.Duration("d", 5*time.Second, "how long to measure")
	window := flag.Int("window", 16, "fanout: messages in flight")
	pipeline := flag.Int("pipeline", 1, "echo: messages sent in one write, their echoes awaited before the next write")
	perConn := flag.Int("per-conn", 0, "echo: echoes per connection before it is closed and another opened (0: no limit)")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "ws-load: -url is required")
		os.Exit(2)
	}
	var result Result
	var err error
	if *mode == "echo" {
		result, err = Echo(*target, *conns, *duration, EchoShape{Pipeline: *pipeline, PerConn: *perConn})
	} else if *mode == "fanout" {
		result, err = Fanout(*target, *second, *conns, *duration, *window)
	} else {
		err = fmt.Errorf("unknown -mode %q (echo or fanout)", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ws-load:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(result)
}

// Result is what one run measured.
type Result struct {
	Mode        string  `json:"mode"`
	Connections int     `json:"connections"`
	Seconds     float64 `json:"seconds"`
	Messages    uint64  `json:"messages"`
	Rate        float64 `json:"rate"`
	P50         float64 `json:"p50_us"`
	P99         float64 `json:"p99_us"`
	Errors      uint64  `json:"errors"`
	// Reconnects: connections opened during the run after the first ones (echo with -per-conn).
	Reconnects uint64 `json:"reconnects"`
}

// Histogram counts latencies in microseconds (the last bucket holds everything from 1 s on).
type Histogram struct{ buckets [1_000_001]atomic.Uint64 }

func (h *Histogram) Add(d time.Duration) {
	us := d.Microseconds()
	if us < 0 {
		us = 0
	}
	if us > 1_000_000 {
		us = 1_000_000
	}
	h.buckets[us].Add(1)
}

// Percentile returns the latency (µs) at or below which `p` of the samples fall.
func (h *Histogram) Percentile(p float64) float64 {
	var total uint64
	for i := range h.buckets {
		total += h.buckets[i].Load()
	}
	if total == 0 {
		return 0
	}
	rank := uint64(p * float64(total))
	var seen uint64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen > rank {
			return float64(i)
		}
	}
	return 1_000_000
}

func dialAll(target string, n int) ([]*Conn, error) {
	conns := make([]*Conn, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	// Connect in waves, so a listen backlog is not flooded.
	for start := 0; start < n; start += 128 {
		for i := start; i < n && i < start+128; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c, err := Dial(target)
				if err != nil {
					errs <- err
					return
				}
				conns[i] = c
			}(i)
		}
		wg.Wait()
	}
	close(errs)
	if err := <-errs; err != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, err
	}
	return conns, nil
}

// EchoShape is how each echo connection sends: Pipeline messages per write (at least 1), and
// PerConn echoes before the connection is closed and another opened (0: no limit).
type EchoShape struct {
	Pipeline int
	PerConn  int
}

// Echo: every connection sends "hello" (Pipeline frames in one write) and awaits the echoes, in a
// loop, for `duration`; with PerConn, a connection that has had that many echoes is closed and
// replaced by a new one. Latency is from a write to each echo of it.
func Echo(target string, n int, duration time.Duration, shape EchoShape) (Result, error) {
	if shape.Pipeline < 1 {
		shape.Pipeline = 1
	}
	conns, err := dialAll(target, n)
	if err != nil {
		return Result{}, err
	}
	var hist Histogram
	var messages, errors, reconnects atomic.Uint64
	var stop atomic.Bool
	var wg sync.WaitGroup
	var open sync.Map
	hello := []byte("hello")
	start := time.Now()
	for i, c := range conns {
		open.Store(i, c)
		wg.Add(1)
		go func(i int, c *Conn) {
			defer wg.Done()
			buf := make([]byte, 64)
			fail := func() {
				if !stop.Load() {
					errors.Add(1)
				}
			}
			echoed := 0
			for !stop.Load() {
				if shape.PerConn > 0 && echoed >= shape.PerConn {
					c.Close()
					next, err := Dial(target)
					if err != nil {
						fail()
						return
					}
					reconnects.Add(1)
					c = next
					open.Store(i, c)
					echoed = 0
				}
				batch := shape.Pipeline
				if shape.PerConn > 0 && batch > shape.PerConn-echoed {
					batch = shape.PerConn - echoed
				}
				sent := time.Now()
				if err := c.WriteTexts(hello, batch); err != nil {
					fail()
					return
				}
				for k := 0; k < batch; k++ {
					got, err := c.ReadMessage(buf)
					if err != nil || string(got) != "hello" {
						fail()
						return
					}
					hist.Add(time.Since(sent))
					messages.Add(1)
					echoed++
				}
			}
		}(i, c)
	}
	time.Sleep(duration)
	stop.Store(true)
	elapsed := time.Since(start).Seconds()
	counted := messages.Load()
	failed := errors.Load()
	open.Range(func(_, c any) bool {
		c.(*Conn).Close()
		return true
	})
	wg.Wait()
	return Result{"echo", n, elapsed, counted, float64(counted) / elapsed, hist.Percentile(0.5), hist.Percentile(0.99), failed, reconnects.Load()}, nil
}

// Fanout: one publisher, n subscribers; each message is stamped with its send time.
func Fanout(target, second string, n int, duration time.Duration, window int) (Result, error) {
	var subscribers []*Conn
	var err error
	if second == "" {
		subscribers, err = dialAll(target, n)
	} else {
		var there []*Conn
		if subscribers, err = dialAll(target, n/2); err == nil {
			there, err = dialAll(second, n-n/2)
			subscribers = append(subscribers, there...)
		}
	}
	if err != nil {
		return Result{}, err
	}
	publisher, err := Dial(target)
	if err != nil {
		return Result{}, err
	}
	// Subscribers are in place once a probe reaches all of them.
	var hist Histogram
	var deliveries, errors atomic.Uint64
	var measuring, stop atomic.Bool
	// done[seq] counts the subscribers that have message seq; the publisher waits on it.
	var mu sync.Mutex
	done := map[uint64]int{}
	finished := make(chan struct{}, window*4)
	var wg sync.WaitGroup
	base := time.Now()
	for _, c := range subscribers {
		wg.Add(1)
		go func(c *Conn) {
			defer wg.Done()
			buf := make([]byte, 64)
			for {
				got, err := c.ReadMessage(buf)
				if err != nil {
					if !stop.Load() {
						errors.Add(1)
					}
					return
				}
				// "seq sentNanos"
				var seq, sent uint64
				if _, err := fmt.Sscan(string(got), &seq, &sent); err != nil {
					errors.Add(1)
					return
				}
				if measuring.Load() {
					hist.Add(time.Duration(time.Since(base).Nanoseconds() - int64(sent)))
					deliveries.Add(1)
				}
				mu.Lock()
				done[seq]++
				all := done[seq] == n
				if all {
					delete(done, seq)
				}
				mu.Unlock()
				if all {
					finished <- struct{}{}
				}
			}
		}(c)
	}
	publish := func(seq uint64) error {
		return publisher.WriteText([]byte(strconv.FormatUint(seq, 10) + " " + strconv.FormatInt(time.Since(base).Nanoseconds(), 10)))
	}
	// A probe first: every subscriber is subscribed once it arrives everywhere.
	var seq uint64
	if err := publish(seq); err != nil {
		return Result{}, err
	}
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		return Result{}, fmt.Errorf("a publication did not reach all %d subscribers within 10 s", n)
	}
	measuring.Store(true)
	start := time.Now()
	inFlight := 0
	deadline := start.Add(duration)
	for time.Now().Before(deadline) {
		for inFlight < window {
			seq++
			if err := publish(seq); err != nil {
				return Result{}, err
			}
			inFlight++
		}
		select {
		case <-finished:
			inFlight--
		case <-time.After(5 * time.Second):
			return Result{}, fmt.Errorf("publications stalled (%d in flight)", inFlight)
		}
	}
	measuring.Store(false)
	elapsed := time.Since(start).Seconds()
	counted := deliveries.Load()
	stop.Store(true)
	publisher.Close()
	for _, c := range subscribers {
		c.Close()
	}
	wg.Wait()
	return Result{"fanout", n, elapsed, counted, float64(counted) / elapsed, hist.Percentile(0.5), hist.Percentile(0.99), errors.Load(), 0}, nil
}

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Options of a fixed-rate run.
type Options struct {
	URL       string
	Rate      float64 // requests per second; 0: an idle run of Duration
	Conns     int
	Duration  time.Duration
	Method    string
	BodySize  int
	CheckEcho bool
	// Grace: how long after the schedule's end answers are still waited for (default 10 s).
	Grace time.Duration
}

// Result of a fixed-rate run. Latencies in microseconds, from each request's due time.
type Result struct {
	Offered    float64        `json:"offered"`   // the rate asked for
	Scheduled  int            `json:"scheduled"` // requests due within the run
	Requests   int            `json:"requests"`  // answered (any status)
	Seconds    float64        `json:"seconds"`   // from the first due time to the last answer (at least the run)
	Rps        float64        `json:"rps"`       // answered per second over Seconds
	RateRatio  float64        `json:"rateRatio"` // Rps / Offered, HttpArena's validity gate
	MeanUs     float64        `json:"meanUs"`
	P50Us      float64        `json:"p50Us"`
	P90Us      float64        `json:"p90Us"`
	P99Us      float64        `json:"p99Us"`
	P999Us     float64        `json:"p999Us"`
	MaxUs      float64        `json:"maxUs"`
	Errors     int            `json:"errors"`   // failed requests (connection errors, wrong echoes)
	Unsent     int            `json:"unsent"`   // due but never sent before the grace ran out
	Statuses   map[string]int `json:"statuses"` // answers by status code
	FirstError string         `json:"firstError,omitempty"`
}

// Schedule returns request i's due time: start + i/rate, the open-loop schedule.
func Schedule(start time.Time, rate float64, i int) time.Time {
	return start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
}

// Due returns how many requests of the schedule are due at `elapsed` since its start (at most total).
func Due(elapsed time.Duration, rate float64, total int) int {
	if elapsed < 0 {
		return 0
	}
	n := int(math.Floor(elapsed.Seconds()*rate)) + 1
	if n > total {
		return total
	}
	return n
}

// Percentile of sorted values (nearest rank); 0 when empty.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p/100*float64(len(sorted))-1e-9)) - 1
	if rank < 0 {
		rank = 0
	}
	if rank >= len(sorted) {
		rank = len(sorted) - 1
	}
	return sorted[rank]
}

func newClient(conns int) *http.Client {
	transport := &http.Transport{
		MaxConnsPerHost:     conns,
		MaxIdleConnsPerHost: conns,
		MaxIdleConns:        conns,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		// HTTP/1.1 only: no ALPN h2.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
		DialContext:  (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}
	return &http.Client{Transport: transport, Timeout: 30 * time.Second}
}

type outcome struct {
	latencies []float64
	statuses  map[string]int
	errors    int
	firstErr  error
	last      time.Time
}

// Run offers o.Rate requests per second for o.Duration over o.Conns keep-alive connections.
func Run(o Options) (Result, error) {
	if o.Conns < 1 && o.Rate > 0 {
		return Result{}, errors.New("-c must be at least 1 to offer a rate")
	}
	if o.Method == "" {
		o.Method = "GET"
	}
	if o.Grace == 0 {
		o.Grace = 10 * time.Second
	}
	body := bytes.Repeat([]byte("x"), o.BodySize)
	client := newClient(o.Conns)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	send := func() (int, error) {
		var reader io.Reader
		if o.BodySize > 0 {
			reader = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, o.Method, o.URL, reader)
		if err != nil {
			return 0, err
		}
		if o.BodySize > 0 {
			req.Header.Set("Content-Type", "application/octet-stream")
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		if o.CheckEcho {
			got, err := io.ReadAll(res.Body)
			if err != nil {
				return res.StatusCode, err
			}
			if !bytes.Equal(got, body) {
				return res.StatusCode, fmt.Errorf("the answer's %d bytes are not the %d sent", len(got), len(body))
			}
			return res.StatusCode, nil
		}
		_, err = io.Copy(io.Discard, res.Body)
		return res.StatusCode, err
	}
	// Open every connection first (one request each, not counted), so the run measures a server
	// holding its connections, not one accepting them. (An idle run with -c 0 opens none.)
	var warm sync.WaitGroup
	warmErrs := make(chan error, o.Conns)
	for i := 0; i < o.Conns; i++ {
		warm.Add(1)
		go func() {
			defer warm.Done()
			if _, err := send(); err != nil {
				warmErrs <- err
			}
		}()
	}
	warm.Wait()
	close(warmErrs)
	if err, failed := <-warmErrs; failed {
		return Result{}, fmt.Errorf("opening the connections: %w", err)
	}

	total := int(math.Round(o.Rate * o.Duration.Seconds()))
	start := time.Now()
	result := Result{Offered: o.Rate, Scheduled: total, Statuses: map[string]int{}}
	if total == 0 {
		// Idle: the connections stay open and nothing is sent.
		time.Sleep(o.Duration)
		result.Seconds = time.Since(start).Seconds()
		return result, nil
	}
	jobs := make(chan time.Time, total)
	stop := make(chan struct{})
	outcomes := make([]outcome, o.Conns)
	var workers sync.WaitGroup
	for w := 0; w < o.Conns; w++ {
		workers.Add(1)
		go func(out *outcome) {
			defer workers.Done()
			out.statuses = map[string]int{}
			for {
				var due time.Time
				select {
				case <-stop:
					return
				case d, ok := <-jobs:
					if !ok {
						return
					}
					due = d
				}
				status, err := send()
				now := time.Now()
				out.last = now
				if err != nil {
					out.errors++
					if out.firstErr == nil {
						out.firstErr = err
					}
					if status == 0 {
						continue
					}
				}
				out.statuses[strconv.Itoa(status)]++
				out.latencies = append(out.latencies, float64(now.Sub(due).Nanoseconds())/1e3)
			}
		}(&outcomes[w])
	}
	// The pacer: every millisecond, hand out the requests that have come due.
	ticker := time.NewTicker(time.Millisecond)
	handed := 0
	for handed < total {
		n := Due(time.Since(start), o.Rate, total)
		for ; handed < n; handed++ {
			jobs <- Schedule(start, o.Rate, handed)
		}
		if handed < total {
			<-ticker.C
		}
	}
	ticker.Stop()
	close(jobs)
	finished := make(chan struct{})
	go func() {
		workers.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(time.Until(start.Add(o.Duration + o.Grace))):
		close(stop)
		cancel()
		<-finished
	}
	result.Unsent = len(jobs)
	var all []float64
	last := start.Add(o.Duration)
	for _, out := range outcomes {
		all = append(all, out.latencies...)
		for k, v := range out.statuses {
			result.Statuses[k] += v
		}
		result.Errors += out.errors
		if out.firstErr != nil && result.FirstError == "" {
			result.FirstError = out.firstErr.Error()
		}
		if out.last.After(last) {
			last = out.last
		}
	}
	sort.Float64s(all)
	result.Requests = len(all)
	result.Seconds = last.Sub(start).Seconds()
	result.Rps = float64(result.Requests) / result.Seconds
	result.RateRatio = result.Rps / o.Rate
	if len(all) > 0 {
		sum := 0.0
		for _, v := range all {
			sum += v
		}
		result.MeanUs = sum / float64(len(all))
		result.P50Us = Percentile(all, 50)
		result.P90Us = Percentile(all, 90)
		result.P99Us = Percentile(all, 99)
		result.P999Us = Percentile(all, 99.9)
		result.MaxUs = all[len(all)-1]
	}
	return result, nil
}

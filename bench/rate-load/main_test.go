package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestScheduleIsOpenLoop(t *testing.T) {
	start := time.Unix(1000, 0)
	if got := Schedule(start, 10_000, 0); !got.Equal(start) {
		t.Fatalf("request 0 is due at the start, got %v", got)
	}
	if got := Schedule(start, 10_000, 25_000); !got.Equal(start.Add(2500 * time.Millisecond)) {
		t.Fatalf("request 25,000 at 10,000/s is due 2.5 s in, got %v", got.Sub(start))
	}
}

func TestDue(t *testing.T) {
	cases := []struct {
		elapsed time.Duration
		want    int
	}{{-time.Millisecond, 0}, {0, 1}, {time.Millisecond, 11}, {999 * time.Microsecond, 10}, {time.Hour, 500}}
	for _, c := range cases {
		if got := Due(c.elapsed, 10_000, 500); got != c.want {
			t.Errorf("Due(%v) = %d, want %d", c.elapsed, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	values := make([]float64, 1000)
	for i := range values {
		values[i] = float64(i + 1)
	}
	if got := Percentile(values, 99); got != 990 {
		t.Errorf("p99 of 1..1000 = %v, want 990", got)
	}
	if got := Percentile(values, 99.9); got != 999 {
		t.Errorf("p99.9 of 1..1000 = %v, want 999", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v, want 0", got)
	}
}

func TestSourceAddressRotates(t *testing.T) {
	got := []string{SourceAddress(0, 3).String(), SourceAddress(1, 3).String(), SourceAddress(2, 3).String(), SourceAddress(3, 3).String(), SourceAddress(5, 0).String()}
	want := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1", "127.0.0.1"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("source addresses %v, want %v", got, want)
		}
	}
}

func TestStatusOK(t *testing.T) {
	for line, want := range map[string]bool{"HTTP/1.1 200 OK\r\n": true, "HTTP/1.0 200\r\n": true, "HTTP/1.1 503 Service Unavailable\r\n": false, "": false, "garbage": false} {
		if StatusOK(line) != want {
			t.Errorf("StatusOK(%q) != %v", line, want)
		}
	}
}

func TestRunSendsTheScheduleOverKeepAlive(t *testing.T) {
	var requests, connections atomic.Int64
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte("3"))
	}))
	server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			connections.Add(1)
		}
	}
	server.Start()
	defer server.Close()
	result, err := Run(Options{URL: server.URL + "/baseline11?a=1&b=2", Rate: 2000, Conns: 8, Duration: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if result.Scheduled != 500 || result.Requests != 500 || result.Statuses["200"] != 500 || result.Errors != 0 || result.Unsent != 0 {
		t.Fatalf("unexpected result %+v", result)
	}
	// 8 connections opened first (one request each), then the 500 scheduled.
	if got := requests.Load(); got != 508 {
		t.Fatalf("server saw %d requests, want 508", got)
	}
	if got := connections.Load(); got != 8 {
		t.Fatalf("the server saw %d connections, want the 8 kept alive", got)
	}
	if !(result.MeanUs > 0 && result.P50Us <= result.P99Us && result.P99Us <= result.MaxUs && result.RateRatio > 0) {
		t.Fatalf("inconsistent latencies %+v", result)
	}
}

func TestRunIdleSendsNothingAfterOpening(t *testing.T) {
	var requests atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer server.Close()
	result, err := Run(Options{URL: server.URL, Rate: 0, Conns: 4, Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if result.Requests != 0 || requests.Load() != 4 {
		t.Fatalf("idle run: %+v, server saw %d requests (want the 4 that opened the connections)", result, requests.Load())
	}
}

func TestRunIdleWithoutConnections(t *testing.T) {
	var requests atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer server.Close()
	result, err := Run(Options{URL: server.URL, Rate: 0, Conns: 0, Duration: 20 * time.Millisecond})
	if err != nil || result.Requests != 0 || requests.Load() != 0 {
		t.Fatalf("idle run without connections: %+v, %v, server saw %d requests", result, err, requests.Load())
	}
	if _, err := Run(Options{URL: server.URL, Rate: 10, Conns: 0, Duration: 20 * time.Millisecond}); err == nil {
		t.Fatal("a rate without connections must be refused")
	}
}

func TestRunChecksEchoes(t *testing.T) {
	echo := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Write(body)
	}))
	defer echo.Close()
	result, err := Run(Options{URL: echo.URL + "/echo", Method: "POST", BodySize: 100 * 1024, CheckEcho: true, Rate: 200, Conns: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if result.Requests != 20 || result.Errors != 0 {
		t.Fatalf("echo over TLS: %+v", result)
	}
	truncating := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		// The first request (opening the connection) is echoed whole, the scheduled ones short by a byte.
		if requestsSeen.Add(1) > 1 {
			body = body[1:]
		}
		w.Write(body)
	}))
	defer truncating.Close()
	result, err = Run(Options{URL: truncating.URL, Method: "POST", BodySize: 10, CheckEcho: true, Rate: 200, Conns: 1, Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if result.Errors != 10 || !strings.Contains(result.FirstError, "not the 10 sent") {
		t.Fatalf("a wrong echo must count as an error: %+v", result)
	}
}

var requestsSeen atomic.Int64

func TestRunFailsWhenTheServerIsDown(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	url := server.URL
	server.Close()
	if _, err := Run(Options{URL: url, Rate: 10, Conns: 1, Duration: 10 * time.Millisecond}); err == nil {
		t.Fatal("want an error when no connection opens")
	}
}

func TestHoldKeepsRequestsPending(t *testing.T) {
	release := make(chan struct{})
	var pending atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pending.Add(1)
		<-release
		w.Write([]byte("10000"))
	}))
	defer server.Close()
	var ready bytes.Buffer
	go func() {
		for pending.Load() < 40 {
			time.Sleep(time.Millisecond)
		}
		close(release)
	}()
	result, err := Hold(HoldOptions{URL: server.URL + "/delay/10000", Conns: 40, Sources: 3, Ready: &ready, Wait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if result.Held != 40 || result.Failed != 0 || result.Answered != 40 || result.Unanswered != 0 {
		t.Fatalf("unexpected %+v", result)
	}
	if ready.String() != "held 40\n" {
		t.Fatalf("told %q", ready.String())
	}
}

func TestRaiseFileLimit(t *testing.T) {
	limit, err := RaiseFileLimit(64)
	if err != nil || limit < 64 {
		t.Fatalf("RaiseFileLimit(64) = %d, %v", limit, err)
	}
}

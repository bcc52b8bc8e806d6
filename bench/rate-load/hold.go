package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HoldOptions of a held-connections run.
type HoldOptions struct {
	URL     string
	Conns   int
	Sources int           // source addresses 127.0.0.1 … 127.0.0.Sources
	Hold    time.Duration // how long to hold once every request is sent
	Wait    time.Duration // then how long to wait for the answers (default 30 s)
	Ready   io.Writer     // told "held N" once every request is sent
}

// HoldResult of a held-connections run.
type HoldResult struct {
	Held        int     `json:"held"`        // connections open with a request sent
	Failed      int     `json:"failed"`      // connections that could not be opened or written
	OpenSeconds float64 `json:"openSeconds"` // time to open them all and send the requests: past the delay, the first are answered before the last are sent
	Answered    int     `json:"answered"`    // answers with status 200 read afterwards
	Unanswered  int     `json:"unanswered"`
	FirstError  string  `json:"firstError,omitempty"`
}

// SourceAddress returns the i-th connection's source address among `sources` loopback addresses.
func SourceAddress(i, sources int) net.IP {
	if sources < 1 {
		sources = 1
	}
	return net.IPv4(127, 0, 0, byte(1+i%sources))
}

// RaiseFileLimit lifts RLIMIT_NOFILE's soft limit to at least want (and the hard limit when
// allowed, as root); returns the soft limit in force.
func RaiseFileLimit(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur >= want {
		return lim.Cur, nil
	}
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return want, nil
		}
		lim.Cur = lim.Max
	} else {
		lim.Cur = want
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}

// Hold opens o.Conns connections, sends a GET of o.URL on each, holds them, then reads the answers.
func Hold(o HoldOptions) (HoldResult, error) {
	if o.Wait == 0 {
		o.Wait = 30 * time.Second
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return HoldResult{}, err
	}
	if u.Scheme != "http" {
		return HoldResult{}, fmt.Errorf("-hold speaks plain http, not %s", u.Scheme)
	}
	if limit, err := RaiseFileLimit(uint64(o.Conns) + 256); err != nil || limit < uint64(o.Conns)+16 {
		return HoldResult{}, fmt.Errorf("RLIMIT_NOFILE is %d, too low for %d connections (%v)", limit, o.Conns, err)
	}
	path := u.RequestURI()
	request := []byte("GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")
	conns := make([]net.Conn, o.Conns)
	var failed atomic.Int64
	var firstErr atomic.Value
	started := time.Now()
	// 64 dialers at once: enough to open tens of thousands in seconds, few enough to stay
	// within the server's accept backlog.
	next := atomic.Int64{}
	var dialers sync.WaitGroup
	for d := 0; d < 64; d++ {
		dialers.Add(1)
		go func() {
			defer dialers.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= o.Conns {
					return
				}
				dialer := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: SourceAddress(i, o.Sources)}, Control: bindAddressNoPort}
				c, err := dialer.Dial("tcp", u.Host)
				if err == nil {
					_, err = c.Write(request)
					if err != nil {
						c.Close()
					}
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				conns[i] = c
			}
		}()
	}
	dialers.Wait()
	result := HoldResult{Failed: int(failed.Load()), OpenSeconds: time.Since(started).Seconds()}
	result.Held = o.Conns - result.Failed
	if e, ok := firstErr.Load().(string); ok {
		result.FirstError = e
	}
	if o.Ready != nil {
		fmt.Fprintf(o.Ready, "held %d\n", result.Held)
	}
	time.Sleep(o.Hold)
	// The answers: each connection's status line, read by a pool of readers before a deadline.
	deadline := time.Now().Add(o.Wait)
	var answered atomic.Int64
	next.Store(0)
	var readers sync.WaitGroup
	for r := 0; r < 256; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(conns) {
					return
				}
				c := conns[i]
				if c == nil {
					continue
				}
				c.SetReadDeadline(deadline)
				line, err := bufio.NewReaderSize(c, 512).ReadString('\n')
				if err == nil && StatusOK(line) {
					answered.Add(1)
				}
				c.Close()
			}
		}()
	}
	readers.Wait()
	result.Answered = int(answered.Load())
	result.Unanswered = result.Held - result.Answered
	return result, nil
}

// bindAddressNoPort sets IP_BIND_ADDRESS_NO_PORT: the source port is chosen at connect(), by the
// whole 4-tuple, rather than at bind(), where each choice scans every port already bound.
func bindAddressNoPort(_, _ string, raw syscall.RawConn) error {
	var err error
	raw.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, 24 /* IP_BIND_ADDRESS_NO_PORT */, 1)
	})
	return err
}

// StatusOK says whether an HTTP/1.x status line is a 200.
func StatusOK(line string) bool {
	return strings.HasPrefix(line, "HTTP/1.") && strings.HasPrefix(line[min(len(line), 8):], " 200")
}

// rate-load: the load generator of Cog's fixed-rate arena scenarios (bench/lib/load.mjs and
// bench/arena/held.mjs run it).
//
//	rate-load -url http://127.0.0.1:3000/baseline11?a=1&b=2 -rate 10000 -c 1024 -d 10s
//	    an open-loop schedule: request i is due at start + i/rate, whatever became of the
//	    ones before it; every 1 ms the requests that have come due are handed to the
//	    connections (keep-alive, -c of them, each one request at a time). Latency runs
//	    from the time a request was due, not from when a connection was free to send it,
//	    so a server that falls behind is charged for the queue it builds (coordinated
//	    omission corrected, as wrk2 and HttpArena's zrk do).
//	rate-load -url https://127.0.0.1:8081/echo -method POST -body-size 102400 -rate 500 -c 64 -d 10s
//	    a body of that many bytes ('x') POSTed each time (TLS certificates are not verified);
//	    -check-echo checks each answer is the body sent back.
//	rate-load -hold -url http://127.0.0.1:3000/delay/10000 -c 10000 -sources 4 -d 5s
//	    opens -c connections (from 127.0.0.1, .2, … .sources, past one address's ephemeral
//	    ports; RLIMIT_NOFILE raised first), sends each one GET and reads nothing: each holds a
//	    pending request. Prints "held N" once they are all sent, waits -d, then reads the
//	    answers that came within -wait (bench/arena/held.mjs samples the server's memory meanwhile).
//
// It prints one JSON line of figures (latencies in microseconds).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	target := flag.String("url", "", "http:// or https:// URL")
	rate := flag.Float64("rate", 1000, "requests per second offered (0: none, an idle run of -d)")
	conns := flag.Int("c", 64, "keep-alive connections (-hold: connections held)")
	duration := flag.Duration("d", 10*time.Second, "how long to offer the rate (-hold: how long to hold)")
	method := flag.String("method", "GET", "request method")
	bodySize := flag.Int("body-size", 0, "bytes of body to send with each request")
	checkEcho := flag.Bool("check-echo", false, "count an answer whose body differs from the one sent as an error")
	hold := flag.Bool("hold", false, "hold -c connections, each with one pending request")
	sources := flag.Int("sources", 1, "-hold: source addresses 127.0.0.1 to 127.0.0.N")
	wait := flag.Duration("wait", 30*time.Second, "-hold: how long to wait for the answers after holding")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "rate-load: -url is required")
		os.Exit(2)
	}
	var out any
	var err error
	if *hold {
		out, err = Hold(HoldOptions{URL: *target, Conns: *conns, Sources: *sources, Hold: *duration, Wait: *wait, Ready: os.Stdout})
	} else {
		out, err = Run(Options{URL: *target, Rate: *rate, Conns: *conns, Duration: *duration, Method: *method, BodySize: *bodySize, CheckEcho: *checkEcho})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rate-load:", err)
		os.Exit(1)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}

// quic-go-client: quic-go's HTTP/3 client (http3.Transport) for the native engine's HTTP/3 tests
// (test/quic-go.ts), the second client nobody here wrote, beside aioquic's. All requests go
// over one QUIC connection to 127.0.0.1:PORT, in phases: a phase's requests all at once, the next
// phase once they are answered. Each phase's answers are printed as one JSON list on stdout.
//
//	quic-go-client PORT '[[{"method": "GET", "path": "/"}], [...]]'
//
// A request's "body" is a string, or {"size": N} for N bytes of "x". With "cancel": true the
// client reads the answer's head and its first bytes, then cancels the request (quic-go sends
// STOP_SENDING and RESET_STREAM with H3_REQUEST_CANCELLED); its answer is then {"cancelled": true}.
// "headers" are sent as they are (without Accept-Encoding, quic-go asks for gzip itself and
// inflates what comes: "uncompressed" says it did). With "sseAck": PATH the answer is read as an
// event stream, event by event: each event (up to its blank line) goes into "events", and the
// client GETs PATH on the same connection before reading on, so a server that sends its next event
// only once the last was acknowledged shows each event arrived on its own.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/quic-go/quic-go/http3"
)

type spec struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Body    json.RawMessage   `json:"body"`
	Headers map[string]string `json:"headers"`
	Cancel  bool              `json:"cancel"`
	SSEAck  string            `json:"sseAck"`
}

type answer struct {
	Status       int               `json:"status,omitempty"`
	Proto        string            `json:"proto,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	Length       int               `json:"length"`
	AllX         bool              `json:"allX"`
	Body         string            `json:"body,omitempty"`
	Cancelled    bool              `json:"cancelled,omitempty"`
	Uncompressed bool              `json:"uncompressed,omitempty"`
	Events       []string          `json:"events,omitempty"`
	Error        string            `json:"error,omitempty"`
}

// Bodies longer than this are reported by length and content only.
const bodyShown = 4096

func body(raw json.RawMessage) (io.Reader, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return strings.NewReader(text), nil
	}
	var sized struct{ Size int }
	if err := json.Unmarshal(raw, &sized); err != nil {
		return nil, fmt.Errorf("body is neither a string nor {size}: %s", raw)
	}
	return bytes.NewReader(bytes.Repeat([]byte("x"), sized.Size)), nil
}

func do(client *http.Client, base string, s spec) answer {
	reader, err := body(s.Body)
	if err != nil {
		return answer{Error: err.Error()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, s.Method, base+s.Path, reader)
	if err != nil {
		return answer{Error: err.Error()}
	}
	for name, value := range s.Headers {
		req.Header.Set(name, value)
	}
	res, err := client.Do(req)
	if err != nil {
		return answer{Error: err.Error()}
	}
	defer res.Body.Close()
	if s.SSEAck != "" {
		return events(client, base, s.SSEAck, res)
	}
	if s.Cancel {
		// The answer has begun (its head and first bytes): the client gives up on it mid-way.
		if _, err := io.ReadFull(res.Body, make([]byte, 1)); err != nil {
			return answer{Error: "no first byte before the cancel: " + err.Error()}
		}
		cancel()
		return answer{Status: res.StatusCode, Cancelled: true}
	}
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{Status: res.StatusCode, Error: err.Error()}
	}
	out := answer{Status: res.StatusCode, Proto: res.Proto, Headers: map[string]string{}, Length: len(data), Uncompressed: res.Uncompressed}
	out.AllX = len(data) > 0 && bytes.Count(data, []byte("x")) == len(data)
	if len(data) <= bodyShown {
		out.Body = string(data)
	}
	for name := range res.Header {
		out.Headers[strings.ToLower(name)] = res.Header.Get(name)
	}
	for name := range res.Trailer {
		out.Headers[strings.ToLower(name)] = res.Trailer.Get(name)
	}
	return out
}

// events reads an event stream event by event, acknowledging each (GET ack) before reading on.
func events(client *http.Client, base, ack string, res *http.Response) answer {
	out := answer{Status: res.StatusCode, Proto: res.Proto, Headers: map[string]string{}}
	for name := range res.Header {
		out.Headers[strings.ToLower(name)] = res.Header.Get(name)
	}
	lines := bufio.NewReader(res.Body)
	var event strings.Builder
	for {
		line, err := lines.ReadString('\n')
		out.Length += len(line)
		event.WriteString(line)
		if line == "\n" {
			out.Events = append(out.Events, event.String())
			event.Reset()
			acked, err := client.Get(base + ack)
			if err != nil {
				out.Error = "acknowledging an event: " + err.Error()
				return out
			}
			io.Copy(io.Discard, acked.Body)
			acked.Body.Close()
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			out.Error = err.Error()
			return out
		}
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: quic-go-client PORT PHASES-JSON")
		os.Exit(2)
	}
	var phases [][]spec
	if err := json.Unmarshal([]byte(os.Args[2]), &phases); err != nil {
		fmt.Fprintln(os.Stderr, "quic-go-client: phases:", err)
		os.Exit(2)
	}
	// The tests' certificate is issued on the spot for localhost: not verified here.
	transport := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"}}
	defer transport.Close()
	client := &http.Client{Transport: transport}
	base := "https://127.0.0.1:" + os.Args[1]
	results := make([][]answer, len(phases))
	for p, specs := range phases {
		results[p] = make([]answer, len(specs))
		var wg sync.WaitGroup
		for i, s := range specs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[p][i] = do(client, base, s)
			}()
		}
		wg.Wait()
	}
	out, _ := json.Marshal(results)
	fmt.Println(string(out))
}

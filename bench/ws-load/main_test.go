package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// A hand-written server for the tests: the RFC's handshake, then it unmasks what arrives and
// echoes it (mode "echo"), or sends what the last connection sends to all the others ("fanout").
func startServer(t *testing.T, fanout bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var all []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				r := bufio.NewReader(c)
				key := ""
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(strings.ToLower(line), "sec-websocket-key:") {
						key = strings.TrimSpace(line[len("sec-websocket-key:"):])
					}
					if line == "\r\n" {
						break
					}
				}
				sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+base64.StdEncoding.EncodeToString(sum[:])+"\r\n\r\n")
				mu.Lock()
				all = append(all, c)
				mu.Unlock()
				for {
					var head [2]byte
					if _, err := io.ReadFull(r, head[:]); err != nil {
						return
					}
					n := int(head[1] & 0x7F)
					if n == 126 {
						var ext [2]byte
						io.ReadFull(r, ext[:])
						n = int(binary.BigEndian.Uint16(ext[:]))
					}
					var mask [4]byte
					io.ReadFull(r, mask[:])
					payload := make([]byte, n)
					io.ReadFull(r, payload)
					for i := range payload {
						payload[i] ^= mask[i%4]
					}
					frame := append([]byte{0x81, byte(n)}, payload...)
					if !fanout {
						c.Write(frame)
						continue
					}
					mu.Lock()
					for _, other := range all {
						if other != c {
							other.Write(frame)
						}
					}
					mu.Unlock()
				}
			}(c)
		}
	}()
	return "ws://" + ln.Addr().String() + "/"
}

func TestFramesOfEveryLengthForm(t *testing.T) {
	for _, n := range []int{0, 125, 126, 65535, 65536} {
		frame := appendFrame(nil, 0x1, make([]byte, n), [4]byte{1, 2, 3, 4})
		want := 2 + 4 + n
		if n >= 126 {
			want += 2
		}
		if n > 0xFFFF {
			want += 6
		}
		if len(frame) != want || frame[1]&0x80 == 0 {
			t.Fatalf("frame of %d bytes: %d bytes long (want %d), masked %v", n, len(frame), want, frame[1]&0x80 != 0)
		}
	}
}

func TestEchoCountsRoundTrips(t *testing.T) {
	result, err := Echo(startServer(t, false), 8, 300*time.Millisecond, EchoShape{})
	if err != nil {
		t.Fatal(err)
	}
	if result.Messages == 0 || result.Errors != 0 || result.P99 < result.P50 || result.Reconnects != 0 {
		t.Fatalf("unexpected result: %+v", result)
	}
}

func TestPipelinedEchoesComeBackInBursts(t *testing.T) {
	result, err := Echo(startServer(t, false), 4, 300*time.Millisecond, EchoShape{Pipeline: 16})
	if err != nil {
		t.Fatal(err)
	}
	if result.Messages < 16 || result.Errors != 0 {
		t.Fatalf("unexpected result: %+v", result)
	}
}

func TestLimitedEchoReconnectsAfterEachConnectionsQuota(t *testing.T) {
	result, err := Echo(startServer(t, false), 4, 300*time.Millisecond, EchoShape{PerConn: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Each connection opened is used for 10 echoes before the next: at least messages/10 - 4 reopened.
	if result.Errors != 0 || result.Reconnects == 0 || result.Reconnects+4 < result.Messages/10 {
		t.Fatalf("unexpected result: %+v", result)
	}
}

func TestFanoutCountsDeliveries(t *testing.T) {
	result, err := Fanout(startServer(t, true), "", 20, 300*time.Millisecond, 4)
	if err != nil {
		t.Fatal(err)
	}
	if result.Messages == 0 || result.Errors != 0 {
		t.Fatalf("unexpected result: %+v", result)
	}
}

func TestARefusedHandshakeIsAnError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, _ := ln.Accept()
		bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\n\r\n")
		c.Close()
	}()
	if _, err := Dial("ws://" + ln.Addr().String() + "/"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("want a 403 error, got %v", err)
	}
}

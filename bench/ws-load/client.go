package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
)

// Conn is the smallest WebSocket client the load needs: text frames out (masked, as RFC 6455
// requires of clients), frames in; control frames the server sends are skipped, except Close.
type Conn struct {
	net  net.Conn
	r    *bufio.Reader
	mask [4]byte
	out  []byte
}

// Dial opens a WebSocket to a ws:// URL.
func Dial(rawURL string) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	path := u.RequestURI()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, u.Host, base64.StdEncoding.EncodeToString(key))
	r := bufio.NewReaderSize(c, 16*1024)
	status, err := r.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 101") {
		c.Close()
		return nil, fmt.Errorf("handshake refused: %s", strings.TrimSpace(status))
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
	}
	conn := &Conn{net: c, r: r}
	rand.Read(conn.mask[:])
	return conn, nil
}

// WriteText sends one masked text frame.
func (c *Conn) WriteText(payload []byte) error {
	c.out = appendFrame(c.out[:0], 0x1, payload, c.mask)
	_, err := c.net.Write(c.out)
	return err
}

// WriteTexts sends `count` masked text frames of the same payload in one write (a pipelined burst).
func (c *Conn) WriteTexts(payload []byte, count int) error {
	c.out = c.out[:0]
	for i := 0; i < count; i++ {
		c.out = appendFrame(c.out, 0x1, payload, c.mask)
	}
	_, err := c.net.Write(c.out)
	return err
}

func appendFrame(out []byte, opcode byte, payload []byte, mask [4]byte) []byte {
	out = append(out, 0x80|opcode)
	n := len(payload)
	switch {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n <= 0xFFFF:
		out = append(out, 0x80|126, byte(n>>8), byte(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	out = append(out, mask[:]...)
	for i, b := range payload {
		out = append(out, b^mask[i%4])
	}
	return out
}

// ErrClosed is what ReadMessage returns once the server sent a Close frame.
var ErrClosed = errors.New("the server closed the WebSocket")

// ReadMessage returns the next text or binary frame's payload (into buf when it fits).
func (c *Conn) ReadMessage(buf []byte) ([]byte, error) {
	for {
		var head [2]byte
		if _, err := io.ReadFull(c.r, head[:]); err != nil {
			return nil, err
		}
		n := uint64(head[1] & 0x7F)
		switch n {
		case 126:
			var ext [2]byte
			if _, err := io.ReadFull(c.r, ext[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(ext[:]))
		case 127:
			var ext [8]byte
			if _, err := io.ReadFull(c.r, ext[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(ext[:])
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		switch head[0] & 0x0F {
		case 0x8:
			return nil, ErrClosed
		case 0x1, 0x2, 0x0:
			return buf, nil
		}
	}
}

func (c *Conn) Close() error { return c.net.Close() }

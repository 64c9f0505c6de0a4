package html

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A minimal client of the Chrome DevTools Protocol over a websocket
// (RFC 6455: one connection, masked text frames out, unmasked frames in),
// enough to drive headless Chromium from a test without a dependency.

type cdpConn struct {
	conn net.Conn
	rd   *bufio.Reader
	wmu  sync.Mutex
	id   int

	mu      sync.Mutex
	pending map[int]chan cdpMessage
	events  chan cdpMessage
	err     error
}

type cdpMessage struct {
	ID     int             `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func dialCDP(ctx context.Context, wsURL string) (*cdpConn, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" {
		return nil, fmt.Errorf("refusing a DevTools endpoint off the loopback: %s", u.Host)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	rd := bufio.NewReaderSize(conn, 1<<20)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	c := &cdpConn{conn: conn, rd: rd, pending: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 4096)}
	go c.readLoop()
	return c, nil
}

func (c *cdpConn) writeFrame(opcode byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	hdr := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	hdr = append(hdr, mask...)
	masked := make([]byte, len(payload))
	for i, b := range payload {
		masked[i] = b ^ mask[i%4]
	}
	_, err := c.conn.Write(append(hdr, masked...))
	return err
}

// readMessage reads one whole message (joining continuation frames),
// answering pings on the way.
func (c *cdpConn) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.rd, h[:]); err != nil {
			return nil, err
		}
		fin, opcode := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.rd, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.rd, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if n > 256<<20 {
			return nil, errors.New("websocket frame too large")
		}
		var mask [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(c.rd, mask[:]); err != nil {
				return nil, err
			}
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.rd, payload); err != nil {
			return nil, err
		}
		if h[1]&0x80 != 0 {
			for i := range payload {
				payload[i] ^= mask[i%4]
			}
		}
		switch opcode {
		case 0x8:
			return nil, io.EOF
		case 0x9:
			c.writeFrame(0xA, payload)
			continue
		case 0xA:
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

func (c *cdpConn) readLoop() {
	for {
		data, err := c.readMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[int]chan cdpMessage{}
			c.mu.Unlock()
			close(c.events)
			return
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case c.events <- m:
		default: // a test that floods events has failed already
		}
	}
}

// call sends a command and waits for its result.
func (c *cdpConn) call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.id++
	id := c.id
	ch := make(chan cdpMessage, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	data, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.writeFrame(0x1, data); err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: connection closed", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://127\.0\.0\.1:\d+/\S+)`)

// startChromium starts headless Chromium with the flags this machine's
// closed network needs and DevTools on a loopback port; it returns the
// websocket URL of a page target.
func startChromium(ctx context.Context, bin, userDir string) (cmd *exec.Cmd, pageWS string, err error) {
	cmd = exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--user-data-dir="+userDir, "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	var browserWS string
	select {
	case s, ok := <-found:
		if !ok {
			cmd.Wait()
			return nil, "", errors.New("chromium exited without a DevTools endpoint")
		}
		browserWS = s
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, "", errors.New("chromium did not open DevTools within 30s")
	}
	u, _ := url.Parse(browserWS)
	for i := 0; i < 50; i++ {
		resp, err := http.Get("http://" + u.Host + "/json/list")
		if err == nil {
			var targets []struct {
				Type, WebSocketDebuggerURL string
			}
			json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
			for _, t := range targets {
				if t.Type == "page" && strings.HasPrefix(t.WebSocketDebuggerURL, "ws://127.0.0.1:") {
					return cmd, t.WebSocketDebuggerURL, nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, "", errors.New("chromium has no page target")
}

package fakemodel

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	DefaultAddr         = "127.0.0.1:0"
	DefaultMaxBodyBytes = 32 << 20
	DefaultMaxRequests  = 10000
	DefaultSideText     = "OK"
)

// Config sets up a Server. The zero value is a server with an empty script
// on a free loopback port.
type Config struct {
	// Script is the replies to give, in order (see Server.Append).
	Script Script
	// Addr is the address to listen on: a loopback IP literal and a port
	// (DefaultAddr when empty). Anything else is refused.
	Addr string
	// MaxBodyBytes caps one request body, compressed or not; a larger one is
	// answered 413 (DefaultMaxBodyBytes when 0).
	MaxBodyBytes int64
	// MaxRequests caps the requests kept; later ones are answered 429
	// (DefaultMaxRequests when 0).
	MaxRequests int
	// SideText answers model calls that offer no tools (DefaultSideText when
	// empty).
	SideText string
}

// A Server is a running fake model. Its methods are safe for concurrent use.
type Server struct {
	cfg  Config
	ln   net.Listener
	http *http.Server
	url  string
	done chan struct{}

	closeOnce sync.Once
	closeErr  error

	inflight atomic.Int64 // requests being answered

	mu       sync.Mutex
	script   Script
	next     int
	seq      int
	reqs     []*Request // in Seq order, each added once answered
	problems []string
	// fallback, when set, makes the reply for a model call that finds
	// the script used up (an open-ended Agenda).
	fallback func() Reply
}

// ErrNotLoopback is returned by Start for an address that is not a loopback
// IP literal.
var ErrNotLoopback = errors.New("fakemodel: only a loopback IP address may be bound")

// Start listens on cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = DefaultMaxRequests
	}
	if cfg.SideText == "" {
		cfg.SideText = DefaultSideText
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: address %q: %w", cfg.Addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%w: %q", ErrNotLoopback, cfg.Addr)
	}
	raw, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: %w", err)
	}
	ln := &onceListener{Listener: raw}
	s := &Server{
		cfg:    cfg,
		ln:     ln,
		url:    "http://" + ln.Addr().String(),
		done:   make(chan struct{}),
		script: append(Script(nil), cfg.Script...),
	}
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    1 << 20,
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// URL is the server's base URL, "http://127.0.0.1:<port>", with no path.
func (s *Server) URL() string { return s.url }

// Close stops the server: it stops accepting connections, waits up to five
// seconds for the requests being answered, then closes every connection.
// (http.Server.Shutdown is not used: it waits for connections a client
// opened but never used, which a busy client's connection pool leaves
// behind.) It is safe to call more than once and from several goroutines;
// every call returns the first one's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	// The listener is closed once whoever asks first (here, or
	// http.Server.Close below while Serve is still tracking it), so neither
	// sees "use of closed network connection" from the other.
	err := s.ln.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if cerr := s.http.Close(); err == nil {
		err = cerr
	}
	<-s.done
	return err
}

// onceListener closes its listener on the first Close and answers every
// later one with nil.
type onceListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *onceListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// Append adds replies to the end of the script.
func (s *Server) Append(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests returns the requests answered so far, in arrival order. A request
// still being answered is not included.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// ModelCalls returns the requests answered from the script, in order.
func (s *Server) ModelCalls() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.ModelCall && !r.Side {
			out = append(out, r)
		}
	}
	return out
}

// Remaining is the number of script replies not served yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// Verify reports what went wrong so far: replies left unused, model calls
// that found the script used up, replies whose Build failed, and bodies the
// server could not read.
func (s *Server) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []string
	if left := len(s.script) - s.next; left > 0 {
		errs = append(errs, fmt.Sprintf("%d of %d scripted replies were never requested", left, len(s.script)))
	}
	errs = append(errs, s.problems...)
	if len(errs) == 0 {
		return nil
	}
	return errors.New("fakemodel: " + strings.Join(errs, "; "))
}

func (s *Server) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// take reserves the next reply of the script.
func (s *Server) take() (Reply, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.script) {
		return Reply{}, -1, false
	}
	i := s.next
	s.next++
	return s.script[i], i, true
}

// ServeHTTP answers one request; see the package comment for the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	if !fromLoopback(hr.RemoteAddr) {
		http.Error(w, "fakemodel serves the loopback interface only", http.StatusForbidden)
		return
	}
	req := &Request{Method: hr.Method, Path: hr.URL.RequestURI(), Header: redact(hr.Header), Reply: -1, At: time.Now()}
	s.mu.Lock()
	if s.seq >= s.cfg.MaxRequests {
		s.mu.Unlock()
		s.problem("more than %d requests; %s %s refused", s.cfg.MaxRequests, hr.Method, req.Path)
		http.Error(w, "fakemodel: too many requests", http.StatusTooManyRequests)
		return
	}
	s.seq++
	req.Seq = s.seq
	s.mu.Unlock()

	rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		req.Status = rw.status
		s.mu.Lock()
		defer s.mu.Unlock()
		i := len(s.reqs)
		for i > 0 && s.reqs[i-1].Seq > req.Seq {
			i--
		}
		s.reqs = slices.Insert(s.reqs, i, req)
	}()

	body, status, err := s.readBody(hr)
	if err != nil {
		s.problem("request %d %s %s: %v", req.Seq, hr.Method, req.Path, err)
		writeError(rw, status, err.Error())
		return
	}
	req.Body = body
	req.decode()
	s.route(rw, req, hr)
}

func (s *Server) readBody(hr *http.Request) ([]byte, int, error) {
	limit := s.cfg.MaxBodyBytes
	raw, err := io.ReadAll(io.LimitReader(hr.Body, limit+1))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err)
	}
	if int64(len(raw)) > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body larger than %d bytes", limit)
	}
	var r io.Reader
	switch enc := strings.ToLower(strings.TrimSpace(hr.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return raw, 0, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip body: %w", err)
		}
		r = zr
	case "deflate":
		r = flate.NewReader(bytes.NewReader(raw))
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("content encoding %q is not supported", enc)
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("decompressing the body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("decompressed body larger than %d bytes", limit)
	}
	return body, 0, nil
}

func (s *Server) route(w http.ResponseWriter, req *Request, hr *http.Request) {
	path := hr.URL.Path
	switch {
	case path == "/" && (hr.Method == http.MethodHead || hr.Method == http.MethodGet):
		w.WriteHeader(http.StatusOK)
	case path == "/v1/messages" && hr.Method == http.MethodPost:
		req.API = Anthropic
		s.modelCall(w, req)
	case path == "/v1/messages/count_tokens" && hr.Method == http.MethodPost:
		req.API = Anthropic
		writeJSON(w, map[string]any{"input_tokens": tokens(req.Body)})
	case path == "/v1/responses" && hr.Method == http.MethodPost:
		req.API = Responses
		s.modelCall(w, req)
	case isChatPath(path) && hr.Method == http.MethodPost:
		req.API = Chat
		s.modelCall(w, req)
	case path == "/v1/models" && hr.Method == http.MethodGet:
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "has_more": false})
	case strings.Contains(path, "/models/") && strings.Contains(path[strings.LastIndex(path, "/"):], ":") && hr.Method == http.MethodPost:
		req.API = Gemini
		i := strings.LastIndex(path, ":")
		req.Model = path[strings.LastIndex(path, "/models/")+len("/models/") : i]
		req.geminiMethod = path[i+1:]
		switch method := req.geminiMethod; method {
		case "streamGenerateContent":
			req.Stream = hr.URL.Query().Get("alt") == "sse"
			s.modelCall(w, req)
		case "generateContent":
			s.modelCall(w, req)
		case "countTokens":
			writeJSON(w, map[string]any{"totalTokens": tokens(req.Body)})
		default:
			writeError(w, http.StatusNotFound, "fakemodel: unknown Gemini method "+method)
		}
	default:
		writeError(w, http.StatusNotFound, "fakemodel: no such endpoint "+hr.Method+" "+path)
	}
}

// modelCall answers a request that asks the model for an answer.
func (s *Server) modelCall(w http.ResponseWriter, req *Request) {
	root, ok := req.decoded.(map[string]any)
	if !ok {
		s.problem("request %d %s: the body is not a JSON object", req.Seq, req.Path)
		writeError(w, http.StatusBadRequest, "fakemodel: the body is not a JSON object")
		return
	}
	req.ModelCall = true
	if req.API != Gemini {
		req.Model, _ = root["model"].(string)
		req.Stream, _ = root["stream"].(bool)
	}
	if len(req.Tools()) == 0 {
		req.Side = true
		text := s.cfg.SideText
		if (req.API == Gemini && geminiWantsJSON(root)) || (req.API == Chat && chatWantsJSON(root)) {
			text = `{"reasoning":"fake model","next_speaker":"user"}`
		}
		s.answer(w, req, Say(text))
		return
	}
	reply, idx, ok := s.take()
	if !ok {
		s.mu.Lock()
		fb := s.fallback
		s.mu.Unlock()
		if fb != nil {
			reply, idx, ok = fb(), -1, true
		}
	}
	if !ok {
		s.problem("request %d (%s): the script has no reply left", req.Seq, req.API)
		s.answer(w, req, Say("fakemodel: the script has no reply left"))
		return
	}
	req.Reply = idx
	if reply.Build != nil {
		built, err := reply.Build(req)
		if err != nil {
			s.problem("request %d: reply %d: %v", req.Seq, idx, err)
			built = Say("fakemodel: building the reply failed: " + err.Error())
		}
		reply = built
	}
	s.answer(w, req, reply)
}

func (s *Server) answer(w http.ResponseWriter, req *Request, reply Reply) {
	switch req.API {
	case Anthropic:
		writeAnthropic(w, req, reply)
	case Responses:
		writeResponses(w, req, reply)
	case Gemini:
		writeGemini(w, req, reply)
	case Chat:
		writeChat(w, req, reply)
	}
}

// tokens is a rough token count for usage fields.
func tokens(body []byte) int { return len(body)/4 + 1 }

func fromLoopback(remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]any{"type": "invalid_request_error", "message": msg, "code": status},
	})
}

// sse writes server-sent events and flushes each one.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

// event writes one event; an empty name writes a data line only.
func (e sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	var buf bytes.Buffer
	if name != "" {
		buf.WriteString("event: " + name + "\n")
	}
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	_, _ = e.w.Write(buf.Bytes())
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// halves splits s in two at a rune boundary, so text streams as two deltas.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i < len(s) && (s[i]&0xC0) == 0x80 {
		i++
	}
	if i == len(s) {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}

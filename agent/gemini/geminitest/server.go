package geminitest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// maxBody bounds a request body; a real prompt stays far below it.
const maxBody = 64 << 20

// Server is a running fake. It is safe for concurrent requests and for calls from the test
// while requests are in flight.
type Server struct {
	srv    *httptest.Server
	limit  int              // inputTokenLimit reported by GET models/M; 0: the catalogue's
	routes map[string]Route // by the model asked for
	models []string         // what models.list answers

	start          time.Time      // the fake's clock at offset 0
	explicitFaults ExplicitFaults // what cachedContents requests fail with
	flex           Flex           // how Flex requests are served and shed

	mu       sync.Mutex       // guards pending, next, reqs, cache, explicit, offset, shed, signatures and answered
	pending  []scripted       // turns not served yet, in script order
	next     int              // script index the next appended turn gets
	reqs     []Request        // every request received, in order
	cache    *implicitCache   // the requests served so far, for cachedContentTokenCount
	explicit []*explicitCache // every cachedContent created, in order
	offset   time.Duration    // how far Advance moved the clock
	shed     int              // Flex requests shed so far
	// signatures are the thought signatures of the function calls sent, by callKey: a request
	// must send one of them back on its call while the call is in the current turn.
	signatures map[string][]string

	busy     sync.Cond // on mu: signalled when a request's answer ends (Idle)
	answered int       // requests being answered now
}

// scripted is a turn waiting to be served, with its index in the script.
type scripted struct {
	Turn
	index int
}

// New starts a fake serving s on a fresh 127.0.0.1 port. It panics if s holds a turn the API
// could not send (a thought signature that is not base64, say): that is a bug in the test.
func New(s Script) *Server {
	srv := newServer(s)
	srv.srv = httptest.NewServer(srv)
	return srv
}

// NewListener is New on a listener the caller chose; fakegemini uses it for --addr. The server
// owns l from then on and closes it in Close.
func NewListener(s Script, l net.Listener) *Server {
	srv := newServer(s)
	srv.srv = httptest.NewUnstartedServer(srv)
	srv.srv.Listener.Close()
	srv.srv.Listener = l
	srv.srv.Start()
	return srv
}

func newServer(s Script) *Server {
	srv := &Server{limit: s.InputTokenLimit, routes: s.Routes, models: s.Models, cache: newImplicitCache(s.Cache),
		start: time.Now(), explicitFaults: s.Cache.Explicit, flex: s.Flex}
	srv.busy.L = &srv.mu
	if srv.models == nil {
		for _, m := range catalog.Builtin().Models() {
			if !m.RetiredAt(time.Now()) {
				srv.models = append(srv.models, m.ID)
			}
		}
	}
	srv.Append(s.Turns...)
	return srv
}

// URL is the base URL to give the genai client as HTTPOptions.BaseURL, e.g.
// http://127.0.0.1:41234.
func (s *Server) URL() string {
	return s.srv.URL
}

// Close stops the server and waits for requests in flight to finish.
func (s *Server) Close() {
	s.srv.Close()
}

// Idle waits until the server answers no request. A request whose client gave up is then
// recorded as unanswered (no usage, nothing billed): a test reading Requests right after a cancel
// calls it first.
func (s *Server) Idle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.answered > 0 {
		s.busy.Wait()
	}
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Pending reports how many turns have not been served yet; a test that expects its script to
// be used up checks it is 0.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Append adds turns after those already scripted, for tests that script step by step. Like New,
// it panics on a turn the API could not send.
func (s *Server) Append(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := validateTurns(turns, s.next); err != nil {
		panic("geminitest: invalid script: " + err.Error())
	}
	for _, t := range turns {
		s.pending = append(s.pending, scripted{Turn: t, index: s.next})
		s.next++
	}
}

// take removes and returns the turn that serves req: among the pending turns of its agent (those
// whose Agent its first message contains, else those without Agent), the first whose Match its
// body contains, else the first without Match. s.mu must be held.
func (s *Server) take(req Request) (scripted, bool) {
	body := string(req.Body)
	first := firstText(req.Contents)
	agent := ""
	for _, t := range s.pending {
		if t.Agent != "" && strings.Contains(first, t.Agent) {
			agent = t.Agent
			break
		}
	}
	pick := -1
	for i, t := range s.pending {
		if t.Agent == agent && t.Match != "" && strings.Contains(body, t.Match) && containsAll(body, t.Also) {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, t := range s.pending {
			if t.Agent == agent && t.Match == "" {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return scripted{}, false
	}
	t := s.pending[pick]
	s.pending = append(s.pending[:pick], s.pending[pick+1:]...)
	return t, true
}

// ServeHTTP serves the models endpoints the genai client uses, on v1beta and v1 as the API does,
// and cachedContents on v1beta only: the API has no explicit caches on v1, so a client that
// drifts to v1 (the SDK's default since genai v1.78.0) fails here as it would there.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.answered--
		s.busy.Broadcast()
		s.mu.Unlock()
	}()
	if strings.HasPrefix(r.URL.Path, "/v1/cachedContents") {
		writeError(w, http.StatusNotFound, fmt.Sprintf("geminitest: %s %s: cachedContents is served on v1beta only, as by the Gemini API", r.Method, r.URL.Path))
		return
	}
	asked := r.URL.Path // as the client sent it, for Request.Path
	if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/models"); ok {
		r.URL.Path = "/v1beta/models" + rest // the same models, generateContent and list
	}
	if r.URL.Path == "/v1beta/models" && r.Method == http.MethodGet {
		s.list(w, r)
		return
	}
	if r.URL.Path == "/v1beta/cachedContents" {
		s.serveCaches(w, r, "")
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1beta/cachedContents/"); ok && id != "" {
		s.serveCaches(w, r, id)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
	if !ok || rest == "" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("geminitest: no such endpoint %s %s", r.Method, r.URL.Path))
		return
	}
	model, method, hasMethod := strings.Cut(rest, ":")
	req := Request{
		Method:    r.Method,
		Path:      asked,
		Model:     model,
		Stream:    method == "streamGenerateContent",
		HasAPIKey: r.Header.Get("x-goog-api-key") != "",
		Turn:      -1,
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req.Body = body
	if err != nil {
		s.record(req)
		writeError(w, http.StatusBadRequest, "geminitest: read request body: "+err.Error())
		return
	}
	served, status, gone := s.route(model)
	switch {
	case gone:
		s.record(req)
		writeError(w, http.StatusNotFound, fmt.Sprintf("This model models/%s is no longer available to new users. Please update your code to use a newer model for the latest features and improvements.", model))
	case !hasMethod:
		s.record(req)
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "geminitest: models/"+model+" only answers GET")
			return
		}
		writeJSON(w, http.StatusOK, s.modelInfo(model))
	default:
		s.generate(w, r, req, method, served, status)
	}
}

// generate answers generateContent, streamGenerateContent and countTokens: the request checked
// as the API would, then the next scripted turn, billed.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, req Request, method, served string, status *wireStatus) {
	generic, code, msg := s.check(r, &req, method)
	if msg != "" {
		writeError(w, code, msg)
		return
	}
	segs := promptSegments(generic)
	explicit, msg, code := s.useCache(generic, served)
	if msg != "" {
		s.record(req)
		writeError(w, code, msg)
		return
	}
	cachedTokens := 0
	if explicit != nil {
		segs = append(append([]segment(nil), explicit.segs...), segs...)
		cachedTokens = explicit.tokens
	}
	prompt := EstimateTokens(promptChars(segs))
	if method == "countTokens" {
		s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": prompt})
		return
	}
	t, usage, n, msg := s.bill(req, served, segs, prompt, cachedTokens)
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if t == nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("geminitest: script exhausted (request %d)", n))
		return
	}
	if d, _ := time.ParseDuration(t.Delay); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			s.unanswered(n) // the client gave up before any reply: none is billed
			return
		}
	}
	if req.FunctionCalling == "NONE" && callsFunction(t.Parts) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("geminitest: request %d turned function calling off, but script turn %d calls a function", n, t.index))
		return
	}
	req.Turn = t.index
	if t.Fault == nil {
		req.Usage = &usage
	}
	s.serveTurn(w, req, served, status, t.Turn, usage)
}

// check decodes a generation request and refuses what the API refuses; a refusal is recorded
// and returned as its status and message.
func (s *Server) check(r *http.Request, req *Request, method string) (generic map[string]any, code int, msg string) {
	switch method {
	case "generateContent", "streamGenerateContent", "countTokens":
	default:
		s.record(*req)
		return nil, http.StatusNotFound, "geminitest: unsupported method " + method
	}
	var err error
	if r.Method != http.MethodPost {
		err = fmt.Errorf("%s needs POST, got %s", method, r.Method)
	} else if err = json.Unmarshal(req.Body, &generic); err == nil {
		err = req.decode()
	}
	switch {
	case err != nil:
		s.record(*req)
		return nil, http.StatusBadRequest, "geminitest: bad request: " + err.Error()
	case hasContinuationToken(generic):
		n := s.record(*req)
		return nil, http.StatusBadRequest, fmt.Sprintf("geminitest: request %d carries a continuationToken; set AutomaticContinuation to false", n)
	case req.Stream && r.URL.Query().Get("alt") != "sse":
		s.record(*req)
		return nil, http.StatusBadRequest, "geminitest: streamGenerateContent is only served with alt=sse"
	}
	return generic, 0, ""
}

// bill records the request and takes the turn that answers it, with its usage: in arrival order,
// under the lock, so that concurrent requests see each other as the API would (the earlier one
// is the one cached). A request the model's rules refuse gets msg; an exhausted script a nil
// turn. n is the request's number. explicit is the tokens of the cachedContent the request names,
// billed cached instead of any implicit hit.
func (s *Server) bill(req Request, served string, segs []segment, prompt, explicit int) (t *scripted, usage Usage, n int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg := s.reject(served, req); msg != "" {
		s.reqs = append(s.reqs, req)
		return nil, Usage{}, len(s.reqs), msg
	}
	if askedFlex(req.Tier) && s.shed < s.flex.Shed {
		// Shed before the model reads it: no turn taken, nothing cached or billed.
		s.shed++
		s.reqs = append(s.reqs, req)
		return &scripted{Turn: Turn{Fault: s.flex.shedFault(served)}, index: -1}, Usage{}, len(s.reqs), ""
	}
	st, ok := s.take(req)
	if ok {
		req.Turn = st.index
		usage = replyUsage(prompt, st.Parts)
		// The model that answers caches: a routed request shares its prefixes.
		usage.Cached = s.cache.bill(served, segs, prompt, processed(req, st.Fault))
		if explicit > 0 && (!s.cache.cfg.OverExplicit || usage.Cached < explicit) {
			usage.Cached = explicit
		}
		if st.Usage != nil {
			usage = *st.Usage
		}
		if usage.ServiceTier == "" {
			usage.ServiceTier = tierName(servedTier(req.Tier, served))
		}
		if st.Fault == nil {
			req.Usage = &usage
			req.ServedTier = catalog.ServedTier(usage.ServiceTier, catalog.TierStandard)
			req.Cost, req.Priced = billOf(served, req.ServedTier, usage, s.nowLocked())
		}
		if processed(req, st.Fault) {
			s.remember(st.Turn)
		}
		t = &st
	}
	s.reqs = append(s.reqs, req)
	return t, usage, len(s.reqs), ""
}

// route says which model answers a request for model, and the modelStatus it reports; gone is
// true when none does: a model the catalogue marks retired on the day, which no route names.
func (s *Server) route(model string) (served string, status *wireStatus, gone bool) {
	if r, ok := s.routes[model]; ok && r.To != "" {
		if r.Stage != "" || r.RetirementTime != "" || r.Message != "" {
			status = &wireStatus{ModelStage: r.Stage, RetirementTime: r.RetirementTime, Message: r.Message}
		}
		return r.To, status, false
	}
	m, ok := catalog.Builtin().Lookup(model)
	return model, nil, ok && m.RetiredAt(time.Now())
}

func callsFunction(parts []Part) bool {
	for _, p := range parts {
		if p.FunctionCall != nil {
			return true
		}
	}
	return false
}

// processed reports whether the model read the prompt, so that it is cached for the requests
// that follow: a fault that comes before any output (a 429, a dropped connection) means it did
// not, one part way through a stream means it did.
func processed(req Request, f *Fault) bool {
	return f == nil || (req.Stream && f.AfterEvents > 0)
}

// unanswered records that request n (1-based) got no reply after all.
func (s *Server) unanswered(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.reqs[n-1]
	r.Usage, r.ServedTier, r.Cost, r.Priced = nil, "", 0, false
}

// record appends req to the log and returns its 1-based number.
func (s *Server) record(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	return len(s.reqs)
}

// serveTurn answers req with t, reporting usage, as model with status.
func (s *Server) serveTurn(w http.ResponseWriter, req Request, model string, status *wireStatus, t Turn, usage Usage) {
	f := t.Fault
	if f == nil && usage.ServiceTier != "" {
		w.Header().Set("X-Gemini-Service-Tier", usage.ServiceTier)
	}
	if !req.Stream {
		switch {
		case f == nil:
			writeJSON(w, http.StatusOK, unaryReply(model, status, t, usage))
		case f.Status == 0:
			// A dropped connection: the client sees a transport error.
			panic(http.ErrAbortHandler)
		default:
			writeJSON(w, f.Status, errorBody(*f))
		}
		return
	}
	if f != nil && f.Status != 0 && f.AfterEvents == 0 {
		writeJSON(w, f.Status, errorBody(*f))
		return
	}
	events := streamReply(model, status, t, usage)
	if f != nil {
		// A failed stream never finishes: what went out before the fault has no finishReason
		// and no usage.
		events = events[:min(f.AfterEvents, len(events))]
		for i := range events {
			events[i].Candidates[0].FinishReason = ""
			events[i].UsageMetadata = nil
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, e := range events {
		if !writeEvent(w, flusher, e) {
			return
		}
	}
	if f != nil && f.Status != 0 {
		writeEvent(w, flusher, errorBody(*f))
	}
	// With f.Status == 0 the handler just returns: the stream ends cleanly between events,
	// which is what a cut connection looks like to the genai client.
}

// writeEvent sends v as one SSE event, "data: <one-line JSON>\n\n", and reports whether the
// client is still there.
func writeEvent(w io.Writer, flusher http.Flusher, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		panic("geminitest: encode event: " + err.Error()) // the wire types always encode
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
		return false
	}
	if flusher != nil {
		flusher.Flush()
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("geminitest: encode response: " + err.Error()) // the wire types always encode
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(b)
}

// writeError sends the API's error JSON for a failure of the fake itself.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody(Fault{Status: status, Message: msg}))
}

// list answers GET models (models.list): a page of pageSize models (50 by default) from
// pageToken, an index, and the token of the next page.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.record(Request{Method: r.Method, Path: r.URL.Path, HasAPIKey: r.Header.Get("x-goog-api-key") != "", Turn: -1})
	q := r.URL.Query()
	size, _ := strconv.Atoi(q.Get("pageSize"))
	if size <= 0 {
		size = 50
	}
	from, _ := strconv.Atoi(q.Get("pageToken"))
	from = min(max(from, 0), len(s.models))
	to := min(from+size, len(s.models))
	var page []map[string]any
	for _, id := range s.models[from:to] {
		info := s.modelInfo(id)
		if strings.HasPrefix(id, "embedding") || strings.HasPrefix(id, "text-embedding") {
			info["supportedGenerationMethods"] = []string{"embedContent"}
		}
		page = append(page, info)
	}
	body := map[string]any{"models": page}
	if to < len(s.models) {
		body["nextPageToken"] = strconv.Itoa(to)
	}
	writeJSON(w, http.StatusOK, body)
}

// modelInfo is what GET models/M answers: the catalogue's limits for a model it knows, the
// script's input limit when it sets one.
func (s *Server) modelInfo(model string) map[string]any {
	in, out, display := DefaultInputTokenLimit, OutputTokenLimit, model
	if m, ok := catalog.Builtin().Lookup(model); ok {
		in, out = m.InputTokenLimit, cmp.Or(m.OutputTokenLimit, OutputTokenLimit)
		display = cmp.Or(m.DisplayName, model)
	}
	if s.limit > 0 {
		in = s.limit
	}
	return map[string]any{
		"name":                       "models/" + model,
		"version":                    "001",
		"displayName":                display,
		"inputTokenLimit":            in,
		"outputTokenLimit":           out,
		"supportedGenerationMethods": []string{"generateContent", "countTokens"},
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

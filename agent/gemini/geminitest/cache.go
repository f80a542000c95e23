package geminitest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"unicode/utf8"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Cache is how the fake bills implicit caching: a request's prefix shared with an earlier request
// of the same model is reported as cachedContentTokenCount once it reaches the model's minimum.
// The zero value is the API's behaviour.
type Cache struct {
	// MinTokens replaces the model's minimum cacheable prefix (the model catalogue's: 4,096 on
	// 3.x and 4 models, 2,048 on 2.5, catalog.FallbackCacheMinTokens on a model it does not
	// know); 0 keeps it. Scripts lower it to see caching with short prompts.
	MinTokens int `json:"minTokens,omitempty"`
	// Off reports no cached tokens at all, as a request with caching unavailable would.
	Off bool `json:"off,omitempty"`
	// MissRate, from 0 to 1, is the share of requests that report no cached tokens though they
	// share a prefix past the minimum: implicit caching is best-effort, and field reports see it
	// miss on whole runs of turns. Which requests miss is drawn from Seed, so that a script gives
	// the same misses on every run with the same requests. A missed request is still
	// remembered: the requests after it may hit.
	MissRate float64 `json:"missRate,omitempty"`
	Seed     uint64  `json:"seed,omitempty"`
	// DeadZone, if set, reports no cached tokens for a prompt of From tokens or more and under
	// To, as reported of 3.x Flash models between about 9k and 17k (googleapis/python-genai#2064).
	DeadZone *Zone `json:"deadZone,omitempty"`
	// Explicit sets how cachedContents requests fail (see ExplicitFaults).
	Explicit ExplicitFaults `json:"explicit,omitzero"`
	// OverExplicit makes a request that reads an explicit cache also get implicit hits on the
	// rest of its prompt: its cached tokens are the larger of the cache's and its longest prefix
	// shared with an earlier request. Off, it gets the cache's alone. Google documents neither
	// (reprise doctor cache measures which the API does).
	OverExplicit bool `json:"overExplicit,omitempty"`
}

// Zone is a range of prompt sizes in tokens: From included, To excluded.
type Zone struct {
	From int `json:"from"`
	To   int `json:"to"`
}

func (z *Zone) holds(tokens int) bool { return z != nil && tokens >= z.From && tokens < z.To }

// validate reports a setting the fake cannot honour.
func (c Cache) validate() error {
	switch {
	case c.MinTokens < 0:
		return fmt.Errorf("negative cache minTokens %d", c.MinTokens)
	case c.MissRate < 0 || c.MissRate > 1:
		return fmt.Errorf("cache missRate %g is not between 0 and 1", c.MissRate)
	case c.DeadZone != nil && (c.DeadZone.From < 0 || c.DeadZone.To <= c.DeadZone.From):
		return fmt.Errorf("cache deadZone from %d to %d is not a range of prompt sizes", c.DeadZone.From, c.DeadZone.To)
	case c.Explicit.Create != nil && (c.Explicit.Create.Status < 400 || c.Explicit.Create.Status > 599):
		return fmt.Errorf("cache explicit create fault status %d is not an HTTP error status", c.Explicit.Create.Status)
	case c.Explicit.Extend != nil && (c.Explicit.Extend.Status < 400 || c.Explicit.Extend.Status > 599):
		return fmt.Errorf("cache explicit extend fault status %d is not an HTTP error status", c.Explicit.Extend.Status)
	}
	return nil
}

// minTokens is the shortest prefix, in tokens, that model bills as cached.
func (c Cache) minTokens(model string) int {
	if c.MinTokens > 0 {
		return c.MinTokens
	}
	return catalog.Builtin().CacheMin(model)
}

// implicitCache remembers, per model, every request the model has processed, as a tree of
// segments (see segment): requests that share a prefix share its nodes, so memory grows with the
// distinct content sent, not with the number of requests, and finding a request's longest shared
// prefix walks the tree once, in time linear in the request's size whatever the number of earlier
// requests. It is not safe for concurrent use; Server guards it with its mutex.
type implicitCache struct {
	cfg   Cache
	trees map[string]*prefixNode // by model
	luck  *rand.Rand             // draws the misses of cfg.MissRate, from cfg.Seed
}

func newImplicitCache(cfg Cache) *implicitCache {
	return &implicitCache{cfg: cfg, trees: map[string]*prefixNode{}, luck: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
}

// bill returns the cachedContentTokenCount of a request of model made of segs: the tokens of its
// longest prefix shared with an earlier remembered request of the same model, or 0 below the
// model's minimum, in the dead zone (prompt is the request's promptTokenCount), or when the
// request is drawn as a miss. remember adds the request for the requests that follow; it is false for a
// request the model never processed (rejected before any output).
func (c *implicitCache) bill(model string, segs []segment, prompt int, remember bool) int {
	if c.cfg.Off {
		return 0
	}
	root := c.trees[model]
	if root == nil {
		root = &prefixNode{}
		c.trees[model] = root
	}
	// A token is cached only when all of its characters are: floor, where the prompt's count
	// rounds up, so cached never exceeds promptTokenCount.
	cached := root.shared(segs) / charsPerToken
	if remember {
		root.add(segs)
	}
	if cached < c.cfg.minTokens(model) || c.cfg.DeadZone.holds(prompt) {
		return 0
	}
	// Drawn only for a request that would hit, so that the misses fall on the same requests
	// whatever the requests that could not hit anyway.
	if c.cfg.MissRate > 0 && c.luck.Float64() < c.cfg.MissRate {
		return 0
	}
	return cached
}

// prefixNode is one segment of one or more remembered requests; its children are the segments
// that followed it.
type prefixNode struct {
	children map[string]*prefixNode // by segment key
	keys     []string               // the children's keys, sorted, for the nearest partial match
}

// shared returns the characters of the longest prefix of segs that some path from n shares,
// counting within the first segment that differs the characters of its longest common prefix
// with a sibling.
func (n *prefixNode) shared(segs []segment) int {
	chars := 0
	for _, s := range segs {
		if next, ok := n.children[s.key]; ok {
			chars += s.chars
			n = next
			continue
		}
		// Of sorted strings, the one sharing the longest prefix with s.key is next to where
		// s.key would be inserted.
		i, _ := slices.BinarySearch(n.keys, s.key)
		best := 0
		for _, j := range []int{i - 1, i} {
			if j >= 0 && j < len(n.keys) {
				best = max(best, commonPrefix(n.keys[j], s.key))
			}
		}
		return chars + s.charsIn(best)
	}
	return chars
}

// add remembers segs as a path from n.
func (n *prefixNode) add(segs []segment) {
	for _, s := range segs {
		next, ok := n.children[s.key]
		if !ok {
			if n.children == nil {
				n.children = map[string]*prefixNode{}
			}
			next = &prefixNode{}
			n.children[s.key] = next
			i, _ := slices.BinarySearch(n.keys, s.key)
			n.keys = slices.Insert(n.keys, i, s.key)
		}
		n = next
	}
}

// commonPrefix is the length in bytes of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// segment is one piece of a request in the order Gemini reads the prompt: the system
// instruction, the tool declarations, then each message and each of its parts. Its key is a
// frame, which is not counted as prompt characters but must match for the prefix to go on (the
// role starting a message, the kind of a part, its thought flag and signature, any field the
// fake does not count), then a NUL, then the body: exactly the characters promptTokenCount
// counts for the piece, so cached and prompt tokens are in the same units.
type segment struct {
	key   string
	frame int // bytes of key before the body, the NUL included
	chars int // characters (runes) of the body
}

func newSegment(frame, body string) segment {
	return segment{key: frame + "\x00" + body, frame: len(frame) + 1, chars: utf8.RuneCountInString(body)}
}

// charsIn counts the body characters within the first n bytes of the key, whole runes only.
func (s segment) charsIn(n int) int {
	if n <= s.frame {
		return 0
	}
	for n > s.frame && n < len(s.key) && !utf8.RuneStart(s.key[n]) {
		n--
	}
	return utf8.RuneCountInString(s.key[s.frame:n])
}

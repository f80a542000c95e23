package geminitest

import (
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
}

func newImplicitCache(cfg Cache) *implicitCache {
	return &implicitCache{cfg: cfg, trees: map[string]*prefixNode{}}
}

// bill returns the cachedContentTokenCount of a request of model made of segs: the tokens of its
// longest prefix shared with an earlier remembered request of the same model, or 0 below the
// model's minimum. remember adds the request for the requests that follow; it is false for a
// request the model never processed (rejected before any output).
func (c *implicitCache) bill(model string, segs []segment, remember bool) int {
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
	if cached < c.cfg.minTokens(model) {
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

package geminitest

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// Flex is how the fake serves requests that ask for the Flex tier (a top-level "serviceTier":
// "flex"): on a model the catalogue says offers it, served and billed on Flex, reported as such
// in usageMetadata.serviceTier and the x-gemini-service-tier header; on another, served on the
// standard tier and reported so. The zero value sheds nothing.
type Flex struct {
	// Shed answers the first Shed Flex requests with Status before any turn is taken, as the API
	// does when it sheds Flex capacity: the model never read them, so nothing is cached or billed.
	Shed int `json:"shed,omitempty"`
	// Status is the shed requests' HTTP status: 429 (RESOURCE_EXHAUSTED, "No capacity available
	// for model … on the server") when 0, or 503 (UNAVAILABLE, "The model is overloaded").
	Status int `json:"status,omitempty"`
}

// validate reports a setting the fake cannot honour.
func (f Flex) validate() error {
	switch {
	case f.Shed < 0:
		return fmt.Errorf("negative flex shed %d", f.Shed)
	case f.Status != 0 && f.Status != http.StatusTooManyRequests && f.Status != http.StatusServiceUnavailable:
		return fmt.Errorf("flex shed status %d is neither 429 nor 503", f.Status)
	}
	return nil
}

// shedFault is the failure a shed Flex request of model gets.
func (f Flex) shedFault(model string) *Fault {
	if f.Status == http.StatusServiceUnavailable {
		return &Fault{Status: f.Status, Message: "The model is overloaded. Please try again later."}
	}
	return &Fault{Status: http.StatusTooManyRequests, Message: fmt.Sprintf("No capacity available for model %s on the server", model)}
}

// servedTier is the tier the fake serves a request asking for asked (the body's serviceTier)
// on model: Flex where the catalogue says the model offers it, standard otherwise.
func servedTier(asked, model string) catalog.Tier {
	if catalog.ServedTier(asked, catalog.TierStandard) == catalog.TierFlex && catalog.Builtin().OffersFlex(model) {
		return catalog.TierFlex
	}
	return catalog.TierStandard
}

// askedFlex tells whether a request's serviceTier asks for Flex, in any spelling.
func askedFlex(asked string) bool {
	return catalog.ServedTier(asked, catalog.TierStandard) == catalog.TierFlex
}

// billOf is what the API bills a reply of usage from model on tier at t, in US dollars, at the
// catalogue's prices: the served model's rates that day for that prompt size, scaled by the
// tier's share. ok is false for a model the catalogue does not price.
func billOf(model string, tier catalog.Tier, u Usage, t time.Time) (float64, bool) {
	cat := catalog.Builtin()
	m, ok := cat.Lookup(model)
	if !ok {
		return 0, false
	}
	r, ok := m.RatesAt(t, u.Prompt)
	if !ok {
		return 0, false
	}
	r = r.Scale(cat.TierShare(tier))
	uncached := max(u.Prompt-u.Cached, 0)
	return (float64(uncached)*r.Input + float64(u.Cached)*r.CachedInput + float64(u.Candidates+u.Thoughts)*r.Output) / 1e6, true
}

// Billed is what the API would have billed every request served so far, in US dollars at the
// catalogue's prices (Request.Cost), and how many served requests it could not price.
func (s *Server) Billed() (dollars float64, unpriced int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		if r.Usage == nil {
			continue
		}
		if !r.Priced {
			unpriced++
		}
		dollars += r.Cost
	}
	return dollars, unpriced
}

// tierName is the wire spelling of a tier, as the API reports it.
func tierName(t catalog.Tier) string { return strings.ToLower(string(t)) }

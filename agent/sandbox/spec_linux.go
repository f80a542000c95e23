package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// The supervisor and the confining process get their spec as a JSON argument: they are this
// binary re-executed (see Init), which only Linux does.

// initialized is set by Init: this binary can play the supervisor and confining parts.
var initialized bool

func markInitialized() { initialized = true }

func encodeSpec(sp spec) string {
	b, _ := json.Marshal(sp)
	return string(b)
}

func decodeSpec(s string) (spec, error) {
	var sp spec
	if err := json.Unmarshal([]byte(s), &sp); err != nil {
		return sp, fmt.Errorf("bad sandbox spec: %w", err)
	}
	if sp.Confine && !filepath.IsAbs(sp.Workspace) {
		return sp, errors.New("bad sandbox spec: workspace is not absolute")
	}
	return sp, nil
}

// splitArgs splits the supervisor's arguments into the spec and the command after "--".
func splitArgs(args []string) (spec, []string, error) {
	if len(args) < 3 || args[1] != "--" {
		return spec{}, nil, errors.New("usage: SPEC -- COMMAND…")
	}
	sp, err := decodeSpec(args[0])
	return sp, args[2:], err
}

package agent

// emitter hands events to the consumer and remembers when it stopped listening.
type emitter struct {
	yield   func(Event, error) bool
	stopped bool
}

func (e *emitter) send(ev Event) bool {
	if !e.stopped && !e.yield(ev, nil) {
		e.stopped = true
	}
	return !e.stopped
}

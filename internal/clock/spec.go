package clock

import (
	"fmt"
	"strings"
	"time"
)

// Parse reads a clock specification, the value of SDKPP_CLOCK and of sdkpp-server's -clock flag:
//
//	"" or "real"            the machine's clock
//	"offset:<duration>"     the machine's clock shifted by a Go duration ("offset:-36h", "offset:90m")
//	"start:<RFC 3339 time>" starts at that time now and runs in real time
//	"fixed:<RFC 3339 time>" stands at that time until moved
//
// All but "real" are Controllable, so the service's dev endpoint POST /api/v10/dev/clock/advance
// can move them. The returned stop function releases the clock's timer.
func Parse(spec string) (Clock, func(), error) {
	kind, arg, _ := strings.Cut(strings.TrimSpace(spec), ":")
	switch kind {
	case "", "real":
		if arg != "" {
			break
		}
		return Real{}, func() {}, nil
	case "offset":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return nil, nil, fmt.Errorf("clock %q: %v", spec, err)
		}
		c := NewOffset(d)
		return c, c.Stop, nil
	case "start", "fixed":
		t, err := time.Parse(time.RFC3339, arg)
		if err != nil {
			return nil, nil, fmt.Errorf("clock %q: %v", spec, err)
		}
		if kind == "fixed" {
			return NewFake(t), func() {}, nil
		}
		c := NewStartingAt(t)
		return c, c.Stop, nil
	}
	return nil, nil, fmt.Errorf("clock %q: want real, offset:<duration>, start:<RFC 3339> or fixed:<RFC 3339>", spec)
}

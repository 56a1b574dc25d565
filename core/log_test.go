package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The fallback log callback takes what no client's log took, inside RunCallbacks, from min up;
// replacing it releases the old one and clearing it releases it too.
func TestFallbackLogCallback(t *testing.T) {
	var got []string
	released := 0
	SetFallbackLogCallback(Callback[ClientLogCallback]{
		Fn:      func(m string, _ LoggingSeverity) { got = append(got, m) },
		Release: func() { released++ },
	}, LoggingSeverityWarning)
	t.Cleanup(func() { SetFallbackLogCallback(Callback[ClientLogCallback]{}, LoggingSeverityNone) })

	Log(LoggingSeverityInfo, "below the minimum")
	Log(LoggingSeverityError, "no client took this")
	assert.Empty(t, got, "not before RunCallbacks")
	RunCallbacks()
	assert.Equal(t, []string{"no client took this"}, got)

	SetFallbackLogCallback(Callback[ClientLogCallback]{}, LoggingSeverityNone)
	RunCallbacks()
	assert.Equal(t, 1, released, "released once when cleared")
	Log(LoggingSeverityError, "to standard error again")
	RunCallbacks()
	assert.Len(t, got, 1)
}

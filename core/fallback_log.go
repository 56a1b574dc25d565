package core

import (
	"sync/atomic"

	"sdkpp/core/logs"
)

// fallbackSink is the sink of the fallback log callback.
type fallbackSink struct{ logs.Sink }

// fallbackLog, when set, takes the messages that no client's log took, instead of standard error.
var fallbackLog atomic.Pointer[fallbackSink]

// SetFallbackLogCallback makes cb receive, inside RunCallbacks, the messages at or above min that
// no client's log took (those of no client, and those of a client without a log callback), in
// place of standard error. A callback with a nil Fn clears it. The callback it replaces is
// released once no RunCallbacks can be calling it.
func SetFallbackLogCallback(cb Callback[ClientLogCallback], min LoggingSeverity) {
	var s *fallbackSink
	if cb.Fn != nil {
		fn := cb.Fn
		s = &fallbackSink{logs.NewCallbackSink(queue.NewScope(cb.Release),
			func(msg string, sev logs.Severity) { fn(msg, LoggingSeverity(sev)) }, logs.Severity(min))}
	} else if cb.Release != nil {
		cb.Release()
	}
	if old := fallbackLog.Swap(s); old != nil {
		old.Close()
	}
}

// fallbackToCallback gives msg to the fallback log callback, if one is set, and reports whether
// one is.
func fallbackToCallback(msg string, sev LoggingSeverity) bool {
	s := fallbackLog.Load()
	if s == nil {
		return false
	}
	if logs.Severity(sev) >= s.Min() && sev < LoggingSeverityNone {
		s.Write(msg, logs.Severity(sev))
	}
	return true
}

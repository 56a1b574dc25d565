package core

import "sync/atomic"

// fallbackLog, when set, takes the messages that no client's log took, instead of standard error.
var fallbackLog atomic.Pointer[callbackSink]

// SetFallbackLogCallback makes cb receive, inside RunCallbacks, the messages at or above min that
// no client's log took (those of no client, and those of a client without a log callback), in
// place of standard error. A callback with a nil Fn clears it. The callback it replaces is
// released once no RunCallbacks can be calling it.
func SetFallbackLogCallback(cb Callback[ClientLogCallback], min LoggingSeverity) {
	var s *callbackSink
	if cb.Fn != nil {
		s = &callbackSink{scope: queue.NewScope(cb.Release), fn: cb.Fn, minSev: min}
	} else if cb.Release != nil {
		cb.Release()
	}
	if old := fallbackLog.Swap(s); old != nil {
		old.close()
	}
}

// fallbackToCallback gives msg to the fallback log callback, if one is set, and reports whether
// one is.
func fallbackToCallback(msg string, sev LoggingSeverity) bool {
	s := fallbackLog.Load()
	if s == nil {
		return false
	}
	if sev >= s.min() && sev < LoggingSeverityNone {
		s.write(msg, sev)
	}
	return true
}

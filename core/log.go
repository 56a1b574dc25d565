package core

import (
	"fmt"

	"sdkpp/core/logs"
	"sdkpp/core/redact"
)

// Where log messages go is core/logs; this file holds what is process-wide: the secrets every
// message is scrubbed of, the live clients that messages of no client reach, and the fallback log.

// Secrets holds every credential value the SDK has handled in this process; log text is
// scrubbed of them before it reaches any sink (rule AU-10). It is core/redact's process-wide set,
// which the records' secret setters fill too.
var Secrets = &redact.Secrets

// clients are the logs of every live Client, so that messages not tied to one client (a refused
// call on a forged handle, say) reach every game log.
var clients logs.Live

// fallbackLog takes the messages that no client's log took: the fallback log callback, else
// standard error (core/logs).
var fallbackLog = func() *logs.Fallback {
	f := &logs.Fallback{}
	f.Stderr.Store(true)
	return f
}()

// Log writes a message that belongs to no particular client to every live client's log, and to
// the fallback log when no log took it. The text is redacted first.
func Log(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	if !clients.Log(msg, logs.Severity(sev)) {
		fallbackLog.Write(msg, logs.Severity(sev))
	}
}

// SetFallbackLogCallback makes cb receive, inside RunCallbacks, the messages at or above min that
// no client's log took (those of no client, and those of a client without a log callback), in
// place of standard error. A callback with a nil Fn clears it. The callback it replaces is
// released once no RunCallbacks can be calling it.
func SetFallbackLogCallback(cb Callback[ClientLogCallback], min LoggingSeverity) {
	if cb.Fn == nil {
		if cb.Release != nil {
			cb.Release()
		}
		fallbackLog.SetSink(nil)
		return
	}
	fn := cb.Fn
	fallbackLog.SetSink(logs.NewCallbackSink(queue.NewScope(cb.Release),
		func(msg string, sev logs.Severity) { fn(msg, LoggingSeverity(sev)) }, logs.Severity(min)))
}

package core

import (
	"fmt"
	"os"
	"sync/atomic"

	"sdkpp/core/logs"
	"sdkpp/core/redact"
)

// Where log messages go is core/logs; this file holds what is process-wide: the secrets every
// message is scrubbed of, the live clients that messages of no client reach, and the fallback to
// standard error.

// Secrets holds every credential value the SDK has handled in this process; log text is
// scrubbed of them before it reaches any sink (rule AU-10).
var Secrets redact.Set

// clients are the logs of every live Client, so that messages not tied to one client (a refused
// call on a forged handle, say) reach every game log.
var clients logs.Live

// StderrFallback says whether warnings and errors that no log sink took are written to the
// process's standard error, so that a misuse is never silent.
var StderrFallback atomic.Bool

func init() { StderrFallback.Store(true) }

// Log writes a message that belongs to no particular client to every live client's log, and to
// standard error when no log took it and sev is Warning or above. The text is redacted first.
func Log(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	if !clients.Log(msg, logs.Severity(sev)) {
		fallback(msg, sev)
	}
}

func fallback(msg string, sev LoggingSeverity) {
	if fallbackToCallback(msg, sev) {
		return
	}
	if sev >= LoggingSeverityWarning && sev < LoggingSeverityNone && StderrFallback.Load() {
		fmt.Fprintf(os.Stderr, "sdkpp: [%s] %s\n", sev, msg)
	}
}

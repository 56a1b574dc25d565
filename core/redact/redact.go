// Package redact removes credentials from text before it reaches a log: bearer and bot tokens,
// OAuth codes, PKCE verifiers, client secrets, JWTs, and any secret value registered with a Set.
package redact

import (
	"regexp"
	"strings"
	"sync"
)

// Mask replaces every credential.
const Mask = "[redacted]"

// secretKeys are parameter and JSON field names whose values are credentials.
var secretKeys = `access_token|refresh_token|id_token|code|code_verifier|code_challenge|client_secret|` +
	`token|external_auth_token|parent_access_token|parent_client_secret|password|device_code|user_code|` +
	`secret|state|nonce|bot_token`

var patterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Authorization schemes: "Bearer abc", "Bot abc", "Basic abc".
	{regexp.MustCompile(`(?i)\b(Bearer|Bot|Basic)(\s+)[A-Za-z0-9\-._~+/]+=*`), "${1}${2}" + Mask},
	// JSON fields: "access_token": "..." (also with escaped quotes).
	{regexp.MustCompile(`(?i)(\\?"(?:` + secretKeys + `)\\?"\s*:\s*\\?")(?:[^"\\]|\\[^"])*(\\?")`), "${1}" + Mask + "${2}"},
	// Form and query parameters: code=..., client_secret=...
	{regexp.MustCompile(`(?i)(\b(?:` + secretKeys + `)=)[^&\s"'<>]+`), "${1}" + Mask},
	// JWTs anywhere.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), Mask},
}

// minSecretLen is the shortest value a Set will redact, so that short common words are left alone.
const minSecretLen = 8

// Secrets holds every credential value the SDK has handled in this process; the SDK scrubs log
// text of them before it reaches any sink (rule AU-10). core re-exports it as core.Secrets.
var Secrets Set

// Set holds secret values to redact wherever they appear. The zero Set is ready to use.
type Set struct {
	mu      sync.RWMutex
	secrets map[string]struct{}
	order   []string
	limit   int
}

// DefaultLimit is how many secrets a Set remembers; the oldest are forgotten first.
const DefaultLimit = 4096

// Add remembers secret so that String removes it; values shorter than 8 bytes are ignored.
func (s *Set) Add(secret string) {
	if len(secret) < minSecretLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secrets == nil {
		s.secrets = map[string]struct{}{}
	}
	if _, ok := s.secrets[secret]; ok {
		return
	}
	limit := s.limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if len(s.order) >= limit {
		delete(s.secrets, s.order[0])
		s.order = s.order[1:]
	}
	s.secrets[secret] = struct{}{}
	s.order = append(s.order, secret)
}

// String returns text with every known secret and every credential pattern masked.
func (s *Set) String(text string) string {
	if s != nil {
		s.mu.RLock()
		for secret := range s.secrets {
			if strings.Contains(text, secret) {
				text = strings.ReplaceAll(text, secret, Mask)
			}
		}
		s.mu.RUnlock()
	}
	return Patterns(text)
}

// Patterns masks credentials recognisable by their shape, without a Set.
func Patterns(text string) string {
	for _, p := range patterns {
		text = p.re.ReplaceAllString(text, p.repl)
	}
	return text
}

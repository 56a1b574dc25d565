package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/loopback"
	"sdkpp/internal/clock"
)

// AuthorizeTimeout bounds how long Authorize waits for the user in the browser.
const AuthorizeTimeout = 10 * time.Minute

// PlatformPrefix is the scheme prefix of default mobile redirects:
// <PlatformPrefix>-<client_id>:/authorize/callback (rule AA-7).
const PlatformPrefix = "sdkpp"

// ErrNoScopes is returned for AuthorizationArgs without scopes (rule AA-2).
var ErrNoScopes error = &sdkerr.ValidationError{Msg: "AuthorizationArgs.Scopes is required"}

// Args are the arguments of the authorization code flow; absent options are nil.
type Args struct {
	ClientID          uint64 // 0: the Client's application id (rule AA-1)
	Scopes            string
	State             *string
	Nonce             *string
	CodeChallenge     *string // the S256 challenge of a PKCE verifier
	IntegrationType   *int32
	CustomSchemeParam *string
}

// Verifier is a PKCE verifier and its S256 challenge.
type Verifier struct{ Verifier, Challenge string }

// NewVerifier returns a new PKCE verifier and its S256 challenge.
func (f *Flows) NewVerifier() Verifier {
	v := oauth2.GenerateVerifier()
	f.Secrets.Add(v)
	return Verifier{Verifier: v, Challenge: oauth2.S256ChallengeFromVerifier(v)}
}

// Request is the browser request that starts the OAuth2 authorization code flow.
type Request struct {
	URL         string // the consent page URL to open
	RedirectURI string // where the service sends the code
	State       string // the state to expect back
}

// RedirectTarget says where the authorization redirect must arrive.
type RedirectTarget struct {
	// Loopback is the address of the SDK's loopback listener on desktop ("127.0.0.1:53124").
	// When empty the platform is mobile and a custom scheme is used.
	Loopback string
}

// BuildRequest turns args into the authorize URL on webBase. appID is the Client's application
// id, used when args has none (rule AA-1). rnd is the source of the generated state (nil: the
// system's).
func BuildRequest(args Args, appID uint64, webBase string, target RedirectTarget, rnd func([]byte) error) (*Request, error) {
	if err := Validate(args, appID); err != nil {
		return nil, err
	}
	scopes := strings.Join(strings.Fields(args.Scopes), " ")
	clientID := args.ClientID
	if clientID == 0 {
		clientID = appID // rule AA-1
	}
	state := ""
	if args.State != nil {
		state = *args.State
	} else {
		s, err := randomState(rnd) // rule AA-3
		if err != nil {
			return nil, fmt.Errorf("generate state: %w", err)
		}
		state = s
	}
	redirect, err := redirectURI(args, clientID, target)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", strconv.FormatUint(clientID, 10))
	q.Set("scope", scopes)
	q.Set("state", state)
	q.Set("redirect_uri", redirect)
	if args.Nonce != nil {
		q.Set("nonce", *args.Nonce) // rule AA-4
	}
	if args.CodeChallenge != nil {
		if *args.CodeChallenge == "" {
			return nil, sdkerr.Invalid("AuthorizationArgs.CodeChallenge has an empty challenge")
		}
		q.Set("code_challenge", *args.CodeChallenge)
		q.Set("code_challenge_method", "S256")
	}
	if args.IntegrationType != nil {
		q.Set("integration_type", strconv.Itoa(int(*args.IntegrationType))) // rule AA-6
	}
	base := strings.TrimRight(webBase, "/")
	return &Request{URL: base + "/oauth2/authorize?" + q.Encode(), RedirectURI: redirect, State: state}, nil
}

// Validate checks what Authorize checks before it sends or opens anything.
func Validate(args Args, appID uint64) error {
	if strings.TrimSpace(args.Scopes) == "" {
		return ErrNoScopes // rule AA-2
	}
	if args.ClientID == 0 && appID == 0 {
		return sdkerr.Invalid("no application id: set AuthorizationArgs.ClientId or call Client.SetApplicationId")
	}
	return nil
}

// redirectURI picks the redirect: the loopback listener on desktop, else the custom scheme form
// of rule AA-7.
func redirectURI(args Args, clientID uint64, target RedirectTarget) (string, error) {
	if target.Loopback != "" {
		return "http://" + target.Loopback + "/authorize/callback", nil
	}
	scheme := PlatformPrefix + "-" + strconv.FormatUint(clientID, 10)
	if args.CustomSchemeParam != nil {
		scheme = *args.CustomSchemeParam
	}
	if !validScheme(scheme) {
		return "", sdkerr.Invalid("CustomSchemeParam %q is not a URI scheme (a letter, then letters, digits, +, - or .)", scheme)
	}
	return scheme + ":/authorize/callback", nil
}

// validScheme follows RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		alpha := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if i == 0 && !alpha {
			return false
		}
		if !alpha && !(r >= '0' && r <= '9') && r != '+' && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// randomState returns 32 random bytes, base64url encoded.
func randomState(rnd func([]byte) error) (string, error) {
	if rnd == nil {
		rnd = func(b []byte) error { _, err := rand.Read(b); return err }
	}
	b := make([]byte, 32)
	if err := rnd(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// redirectTargetFor is where the authorization redirect lands on this platform: a loopback
// listener on desktop, the custom scheme on mobile (rule AA-7).
func redirectTargetFor(r *loopback.Receiver) RedirectTarget {
	if runtime.GOOS == "android" || runtime.GOOS == "ios" || r == nil {
		return RedirectTarget{}
	}
	return RedirectTarget{Loopback: r.Addr()}
}

// Authorization is an Authorize under way: the consent page is to be opened and the redirect
// awaited by Wait.
type Authorization struct {
	f       *Flows
	ctx     context.Context
	cancel  context.CancelFunc
	recv    *loopback.Receiver
	request *Request
}

// StartAuthorize prepares the authorization code flow (rule AU-1) under parent: it checks args
// (rule AA-2: nothing is sent when they are wrong), listens for the redirect, and aborts the
// Authorize in progress. appID is the Client's application id. The caller either calls Wait or
// Close.
func (f *Flows) StartAuthorize(parent context.Context, args Args, appID uint64) (*Authorization, error) {
	if err := Validate(args, appID); err != nil {
		return nil, err
	}
	if args.State == nil {
		s, err := randomState(nil) // rule AA-3
		if err != nil {
			return nil, err
		}
		args.State = &s
	}
	f.Secrets.Add(*args.State)
	recv, err := loopback.Listen(*args.State)
	if err != nil {
		return nil, err
	}
	req, err := BuildRequest(args, appID, f.WebBase, redirectTargetFor(recv), nil)
	if err != nil {
		recv.Close()
		return nil, err
	}
	ctx, cancel := clock.WithTimeout(parent, f.Clock, AuthorizeTimeout)
	f.cancelPrevious(&f.authorizeCancel, cancel)
	return &Authorization{f: f, ctx: ctx, cancel: cancel, recv: recv, request: req}, nil
}

// Close releases what the authorization holds; Wait calls it.
func (a *Authorization) Close() {
	a.cancel()
	a.recv.Close()
}

// Wait opens the consent page and waits for the user: it returns the code and the redirect URI
// to pass to the code grant, or why there is none (aborted, timed out, denied).
func (a *Authorization) Wait() (code, redirectURI string, err error) {
	defer a.Close()
	if err := a.f.Open(a.request.URL); err != nil {
		return "", "", err
	}
	code, err = a.recv.Wait(a.ctx)
	if err != nil && a.ctx.Err() != nil {
		err = context.Cause(a.ctx) // DeadlineExceeded when the clock ran out
	}
	if err != nil {
		switch {
		case errors.Is(err, context.Canceled):
			err = sdkerr.ErrAborted
		case errors.Is(err, context.DeadlineExceeded):
			err = fmt.Errorf("%w: the user did not finish within %v", sdkerr.ErrAborted, AuthorizeTimeout)
		}
		a.f.Logf(Warning, "Authorize: %v", err)
		return "", "", err
	}
	a.f.Secrets.Add(code)
	return code, a.request.RedirectURI, nil
}

// AbortAuthorize ends the Authorize in progress: its Wait returns ErrAborted. A redirect
// arriving later finds nothing listening.
func (f *Flows) AbortAuthorize() { f.abort(&f.authorizeCancel) }

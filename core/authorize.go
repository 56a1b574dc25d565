package core

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PlatformPrefix is the scheme prefix of default mobile redirects:
// <PlatformPrefix>-<client_id>:/authorize/callback (rule AA-7).
const PlatformPrefix = "sdkpp"

// ErrNoScopes is returned for AuthorizationArgs without scopes (rule AA-2).
var ErrNoScopes error = &validationError{msg: "AuthorizationArgs.Scopes is required"}

// AuthorizeRequest is the browser request that starts the OAuth2 authorization code flow.
type AuthorizeRequest struct {
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

// buildAuthorizeRequest turns args into the authorize URL on webBase. appID is the Client's
// application id, used when args has none (rule AA-1). rand is the source of the generated state.
func buildAuthorizeRequest(args *AuthorizationArgs, appID uint64, webBase string, target RedirectTarget, rnd func([]byte) error) (*AuthorizeRequest, error) {
	if err := validateAuthorize(args, appID); err != nil {
		return nil, err
	}
	scopes := strings.Join(strings.Fields(args.Scopes()), " ")
	clientID := args.ClientId()
	if clientID == 0 {
		clientID = appID // rule AA-1
	}
	state, ok := args.State()
	if !ok {
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
	if nonce, ok := args.Nonce(); ok {
		q.Set("nonce", nonce) // rule AA-4
	}
	if ch := args.CodeChallenge(); ch != nil {
		if ch.Challenge() == "" {
			return nil, invalid("AuthorizationArgs.CodeChallenge has an empty challenge")
		}
		q.Set("code_challenge", ch.Challenge())
		q.Set("code_challenge_method", "S256")
	}
	if it, ok := args.IntegrationType(); ok {
		q.Set("integration_type", strconv.Itoa(int(it))) // rule AA-6
	}
	base := strings.TrimRight(webBase, "/")
	return &AuthorizeRequest{URL: base + "/oauth2/authorize?" + q.Encode(), RedirectURI: redirect, State: state}, nil
}

// validateAuthorize checks what Authorize checks before it sends or opens anything.
func validateAuthorize(args *AuthorizationArgs, appID uint64) error {
	if strings.TrimSpace(args.Scopes()) == "" {
		return ErrNoScopes // rule AA-2
	}
	if args.ClientId() == 0 && appID == 0 {
		return invalid("no application id: set AuthorizationArgs.ClientId or call Client.SetApplicationId")
	}
	return nil
}

// redirectURI picks the redirect: the loopback listener on desktop, else the custom scheme form of
// rule AA-7.
func redirectURI(args *AuthorizationArgs, clientID uint64, target RedirectTarget) (string, error) {
	if target.Loopback != "" {
		return "http://" + target.Loopback + "/authorize/callback", nil
	}
	scheme, ok := args.CustomSchemeParam()
	if !ok {
		scheme = PlatformPrefix + "-" + strconv.FormatUint(clientID, 10)
	}
	if !validScheme(scheme) {
		return "", invalid("CustomSchemeParam %q is not a URI scheme (a letter, then letters, digits, +, - or .)", scheme)
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

package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sdkpp/core/internal/sdkerr"
	"sdkpp/core/rest"
	"sdkpp/internal/clock"
)

// The OAuth 2.0 device authorization flow (RFC 8628), for consoles and TVs: the SDK shows a
// verification page and polls until the user approves on another device.

// deviceCode is the answer of /oauth2/device/authorize (RFC 8628).
type deviceCode struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// DeviceFlow is a device flow ready to run.
type DeviceFlow struct {
	f        *Flows
	ctx      context.Context
	cancel   context.CancelFunc
	clientID uint64
	scopes   string
	extra    url.Values
}

// ClientID is the application the flow obtains a token for.
func (d *DeviceFlow) ClientID() uint64 { return d.clientID }

// CheckDevice checks the arguments of a device flow for application clientID (the Client's, if
// the game gave none): it returns the normalized scopes, or why the flow is refused before
// anything is sent.
func CheckDevice(clientID uint64, scopes string) (string, error) {
	scopes = strings.Join(strings.Fields(scopes), " ")
	switch {
	case scopes == "":
		return "", sdkerr.Invalid("DeviceAuthorizationArgs.Scopes is required")
	case clientID == 0:
		return "", sdkerr.Invalid("no application id: set DeviceAuthorizationArgs.ClientId or call Client.SetApplicationId")
	}
	return scopes, nil
}

// StartDevice prepares the device flow under parent for application clientID and aborts the one
// in progress. scopes have passed CheckDevice; extra are the external credentials of a
// provisional account to merge (Grant.WithExternal), or nil.
func (f *Flows) StartDevice(parent context.Context, clientID uint64, scopes string, extra Grant) *DeviceFlow {
	ctx, cancel := context.WithCancel(parent)
	f.cancelPrevious(&f.deviceCancel, cancel)
	f.Secrets.Add(url.Values(extra).Get("external_auth_token"))
	return &DeviceFlow{f: f, ctx: ctx, cancel: cancel, clientID: clientID, scopes: scopes, extra: url.Values(extra)}
}

// Run asks for a device code, opens the verification page and polls the token endpoint until
// the user approves, declines or the code expires. It remembers the tokens it obtains.
func (d *DeviceFlow) Run() (*Tokens, error) {
	defer d.cancel()
	f, ctx, clientID := d.f, d.ctx, strconv.FormatUint(d.clientID, 10)
	var dc deviceCode
	err := f.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/device/authorize",
		Form: url.Values{"client_id": {clientID}, "scope": {d.scopes}}}, &dc)
	if err != nil {
		return nil, aborted(err)
	}
	f.Secrets.Add(dc.DeviceCode)
	page := dc.VerificationURIComplete
	if page == "" {
		page = dc.VerificationURI
	}
	if err := f.Open(page); err != nil {
		return nil, err
	}
	interval := time.Duration(dc.Interval) * time.Second
	if interval <= 0 {
		interval = 5 * time.Second
	}
	form := url.Values{
		"grant_type":  {"urn:ietf:params:oauth:grant-type:device_code"},
		"client_id":   {clientID},
		"device_code": {dc.DeviceCode},
	}
	for k, v := range d.extra {
		form[k] = v
	}
	for {
		if err := clock.Sleep(ctx, f.Clock, interval); err != nil {
			return nil, aborted(err)
		}
		var t Tokens
		err := f.API.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: form}, &t)
		var re *rest.Error
		switch {
		case err == nil:
			f.Remember(&t, d.clientID)
			return &t, nil
		case errors.As(err, &re) && re.OAuthError == "authorization_pending":
		case errors.As(err, &re) && re.OAuthError == "slow_down":
			interval += 5 * time.Second // RFC 8628, section 3.5
		default:
			return nil, aborted(err)
		}
	}
}

// aborted maps a cancelled context to ErrAborted.
func aborted(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %v", sdkerr.ErrAborted, err)
	}
	return err
}

// AbortDevice ends the device flow in progress; its Run returns ErrAborted.
func (f *Flows) AbortDevice() { f.abort(&f.deviceCancel) }

// OpenDeviceScreen shows the verification page for a user code that the game's backend obtained
// (the backend-driven device flow).
func (f *Flows) OpenDeviceScreen(clientID uint64, userCode string) error {
	u := strings.TrimRight(f.WebBase, "/") + "/activate?" + url.Values{
		"user_code": {userCode}, "client_id": {strconv.FormatUint(clientID, 10)}}.Encode()
	if err := f.Open(u); err != nil {
		return err
	}
	f.mu.Lock()
	f.screenOpen = true
	f.mu.Unlock()
	return nil
}

// CloseDeviceScreen closes the page OpenDeviceScreen showed, and reports whether it was open.
func (f *Flows) CloseDeviceScreen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	open := f.screenOpen
	f.screenOpen = false
	return open
}

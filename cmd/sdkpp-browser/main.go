// Command sdkpp-browser acts as a user's browser on the service's consent and device pages, for
// tests that are not written in Go.
//
//	sdkpp-browser -user NAME -password PW [-deny] [-grant-scopes "email guilds"] [-print-location] AUTHORIZE_URL
//	sdkpp-browser -user NAME -password PW [-deny] -device-code USER_CODE BASE_URL
//
// With an authorize URL it loads the consent page, logs in and presses Approve (or Deny), then, when
// the redirect goes to an http(s) loopback address (the SDK's loopback listener), it GETs that URL
// so the listener receives the code (or the error). It prints each step; the code in a redirect is
// printed only with -print-location (for custom-scheme redirects that cannot be followed).
//
// With -device-code it opens BASE_URL/activate?user_code=USER_CODE, logs in and approves (or
// denies) the device request.
//
// Exit status: 0 done, 1 the service or the callback refused, 2 usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"sdkpp/server/browser"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sdkpp-browser", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "username to log in as")
	password := fs.String("password", "", "password")
	deny := fs.Bool("deny", false, "press Deny instead of Approve")
	grant := fs.String("grant-scopes", "", "grant only these additional scopes (space-separated); default: all checked")
	grantNone := fs.Bool("grant-none", false, "grant no additional scope")
	deviceCode := fs.String("device-code", "", "answer the device verification page for this user code")
	printLocation := fs.Bool("print-location", false, "print the full redirect location, code included")
	timeout := fs.Duration("timeout", 30*time.Second, "overall time limit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (!*deny && (*user == "" || *password == "")) {
		fmt.Fprintln(stderr, "usage: sdkpp-browser -user NAME -password PW [-deny] [-device-code CODE] URL")
		return 2
	}
	choice := browser.Choice{Username: *user, Password: *password, Deny: *deny}
	if *grant != "" {
		choice.GrantScopes = strings.Fields(*grant)
	}
	if *grantNone {
		choice.GrantScopes = []string{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	b := browser.New()
	target := fs.Arg(0)

	if *deviceCode != "" {
		msg, err := b.Activate(ctx, target, *deviceCode, choice)
		if err != nil {
			fmt.Fprintln(stderr, "sdkpp-browser:", err)
			return 1
		}
		fmt.Fprintf(stdout, "device: %s as %s: %s\n", verb(*deny), *user, msg)
		return 0
	}

	loc, err := b.Authorize(ctx, target, choice)
	if err != nil {
		fmt.Fprintln(stderr, "sdkpp-browser:", err)
		return 1
	}
	fmt.Fprintf(stdout, "consent: %s as %s\n", verb(*deny), orAnonymous(*user, *deny))
	shown := loc
	if !*printLocation {
		shown = redact(loc)
	}
	fmt.Fprintf(stdout, "redirect: %s\n", shown)
	u, err := url.Parse(loc)
	if err != nil || !loopbackHTTP(u) {
		fmt.Fprintln(stdout, "callback: not followed (not an http loopback address)")
		return 0
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		fmt.Fprintln(stderr, "sdkpp-browser:", err)
		return 1
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "sdkpp-browser: callback:", errorWithoutURL(err))
		return 1
	}
	resp.Body.Close()
	fmt.Fprintf(stdout, "callback: HTTP %d\n", resp.StatusCode)
	if resp.StatusCode >= 400 {
		return 1
	}
	return 0
}

func verb(deny bool) string {
	if deny {
		return "denied"
	}
	return "approved"
}

func orAnonymous(user string, deny bool) string {
	if user == "" || deny {
		return "(no login)"
	}
	return user
}

// redact hides the code in a redirect location.
func redact(loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return "(unparsable location)"
	}
	q := u.Query()
	if q.Has("code") {
		q.Set("code", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func loopbackHTTP(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// errorWithoutURL drops the URL (which holds the code) from a client error.
func errorWithoutURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

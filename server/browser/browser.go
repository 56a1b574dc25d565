// Package browser drives the service's consent page, device verification page and guild invite
// page the way a user's browser does: it loads the page, keeps its cookies, fills in the login
// form and presses Approve (Join) or Deny. Go tests use it through package servertest;
// cmd/sdkpp-browser wraps it for tests in other languages. It reads only the service's own pages
// (see package oauth for the forms).
package browser

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Browser is a cookie-keeping HTTP client that does not follow redirects.
type Browser struct {
	Client *http.Client
}

// New returns a Browser with an empty cookie jar.
func New() *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{Client: &http.Client{
		Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Form is a parsed HTML form.
type Form struct {
	Action string
	Method string
	Fields url.Values // hidden inputs and checked checkboxes
	// Checkboxes lists every checkbox value by name (checked or not).
	Checkboxes map[string][]string
	// Login is true when the form asks for username and password.
	Login bool
}

var (
	formTag  = regexp.MustCompile(`(?is)<form\b([^>]*)>`)
	inputTag = regexp.MustCompile(`(?is)<input\b([^>]*)>`)
	attrRE   = regexp.MustCompile(`([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*"([^"]*)")?`)
	errorRE  = regexp.MustCompile(`(?is)<p class="error"[^>]*>(.*?)</p>`)
	titleRE  = regexp.MustCompile(`(?is)<h1>(.*?)</h1>`)
	tagRE    = regexp.MustCompile(`<[^>]*>`)
)

func attrs(s string) map[string]string {
	out := map[string]string{}
	for _, m := range attrRE.FindAllStringSubmatch(s, -1) {
		out[strings.ToLower(m[1])] = html.UnescapeString(m[2])
	}
	return out
}

// ParseForm reads the first form of page.
func ParseForm(page string) (*Form, error) {
	fm := formTag.FindStringSubmatch(page)
	if fm == nil {
		return nil, fmt.Errorf("no form on the page: %s", PageMessage(page))
	}
	fa := attrs(fm[1])
	f := &Form{Action: fa["action"], Method: strings.ToUpper(fa["method"]), Fields: url.Values{}, Checkboxes: map[string][]string{}}
	if f.Method == "" {
		f.Method = http.MethodGet
	}
	for _, m := range inputTag.FindAllStringSubmatch(page, -1) {
		a := attrs(m[1])
		name := a["name"]
		_, checked := a["checked"]
		switch strings.ToLower(a["type"]) {
		case "hidden":
			f.Fields.Add(name, a["value"])
		case "checkbox":
			f.Checkboxes[name] = append(f.Checkboxes[name], a["value"])
			if checked {
				f.Fields.Add(name, a["value"])
			}
		case "password":
			f.Login = true
		}
	}
	return f, nil
}

// PageMessage returns the error text of a page, or its heading.
func PageMessage(page string) string {
	for _, re := range []*regexp.Regexp{errorRE, titleRE} {
		if m := re.FindStringSubmatch(page); m != nil {
			return strings.TrimSpace(html.UnescapeString(tagRE.ReplaceAllString(m[1], "")))
		}
	}
	return "(no message)"
}

// Page is a fetched page.
type Page struct {
	URL      *url.URL
	Status   int
	Body     string
	Location string // the Location of a redirect answer
}

func (b *Browser) do(ctx context.Context, method, target string, form url.Values) (*Page, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return &Page{URL: req.URL, Status: resp.StatusCode, Body: string(raw), Location: resp.Header.Get("Location")}, nil
}

// Get loads a page.
func (b *Browser) Get(ctx context.Context, target string) (*Page, error) {
	return b.do(ctx, http.MethodGet, target, nil)
}

// Submit posts form with extra fields set, to the form's action resolved against the page URL.
func (b *Browser) Submit(ctx context.Context, page *Page, form *Form, set url.Values) (*Page, error) {
	action, err := page.URL.Parse(form.Action)
	if err != nil {
		return nil, err
	}
	values := url.Values{}
	for k, v := range form.Fields {
		values[k] = slices.Clone(v)
	}
	for k, v := range set {
		values[k] = v
	}
	return b.do(ctx, http.MethodPost, action.String(), values)
}

// Choice says how to answer a consent page.
type Choice struct {
	Username, Password string // used when the page asks to log in
	Deny               bool
	// GrantScopes, when not nil, replaces the checked additional scopes: only these are granted
	// (rule SC-4).
	GrantScopes []string
}

func (c Choice) values(f *Form) url.Values {
	v := url.Values{"action": {"approve"}}
	if c.Deny {
		v.Set("action", "deny")
	}
	if f.Login && !c.Deny {
		v.Set("username", c.Username)
		v.Set("password", c.Password)
	}
	if c.GrantScopes != nil {
		v["grant_scope"] = c.GrantScopes
		if len(c.GrantScopes) == 0 {
			v["grant_scope"] = []string{}
		}
	}
	return v
}

// answer fills in the form of a loaded page (what names it in errors) with c and submits it.
func (b *Browser) answer(ctx context.Context, page *Page, c Choice, what string) (*Page, error) {
	if page.Status != http.StatusOK {
		return nil, fmt.Errorf("%s page: HTTP %d: %s", what, page.Status, PageMessage(page.Body))
	}
	form, err := ParseForm(page.Body)
	if err != nil {
		return nil, err
	}
	if c.GrantScopes != nil {
		form.Fields.Del("grant_scope")
	}
	return b.Submit(ctx, page, form, c.values(form))
}

// Authorize opens an authorize URL, answers its consent page with c and returns the Location the
// service redirects to (not followed).
func (b *Browser) Authorize(ctx context.Context, authorizeURL string, c Choice) (string, error) {
	page, err := b.Get(ctx, authorizeURL)
	if err != nil {
		return "", err
	}
	if page.Status == http.StatusFound || page.Status == http.StatusSeeOther {
		return page.Location, nil // prompt=none, or an error redirect
	}
	resp, err := b.answer(ctx, page, c, "consent")
	if err != nil {
		return "", err
	}
	if resp.Status != http.StatusFound && resp.Status != http.StatusSeeOther {
		return "", fmt.Errorf("consent submit: HTTP %d: %s", resp.Status, PageMessage(resp.Body))
	}
	return resp.Location, nil
}

// Activate opens the device verification page of baseURL for userCode, answers it with c, and
// returns the final page's message.
func (b *Browser) Activate(ctx context.Context, baseURL, userCode string, c Choice) (string, error) {
	return b.complete(ctx, strings.TrimRight(baseURL, "/")+"/activate?user_code="+url.QueryEscape(userCode), c, "activate")
}

// JoinInvite opens a guild invite page (<web base>/invite/<code>, the URL JoinLinkedLobbyGuild
// answers with), logs in with c when the page asks, presses Join and returns the final page's
// message ("You joined <guild>").
func (b *Browser) JoinInvite(ctx context.Context, inviteURL string, c Choice) (string, error) {
	return b.complete(ctx, inviteURL, c, "invite")
}

// complete loads the page at target, answers its form with c and returns the message of the
// 200 page that follows (what names the page in errors).
func (b *Browser) complete(ctx context.Context, target string, c Choice, what string) (string, error) {
	page, err := b.Get(ctx, target)
	if err != nil {
		return "", err
	}
	resp, err := b.answer(ctx, page, c, what)
	if err != nil {
		return "", err
	}
	if resp.Status != http.StatusOK {
		return "", fmt.Errorf("%s submit: HTTP %d: %s", what, resp.Status, PageMessage(resp.Body))
	}
	return PageMessage(resp.Body), nil
}

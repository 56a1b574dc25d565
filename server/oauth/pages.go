package oauth

import (
	"html/template"
	"net/http"
)

// scopeLine is one requested scope on a consent page.
type scopeLine struct {
	Name        string
	Description string
	Optional    bool // a checkbox (rule SC-4)
}

// consentData fills the consent, activate and invite pages.
type consentData struct {
	Title       string
	Details     []string // paragraphs above the form (the invite page's guild and inviter)
	Submit      string   // when set, one button of that label replaces the scopes and Approve/Deny
	Decline     string   // with Submit: a second button of that label, which declines
	AppName     string
	Action      string            // form action path
	Hidden      map[string]string // hidden inputs (authorize parameters, user_code)
	CSRF        string
	User        string // signed-in user, "" when a login form is shown
	Scopes      []scopeLine
	Unavailable []string // requested scopes the app may not have (rule AU-2)
	Error       string
}

var pageStyle = `body{font-family:system-ui,sans-serif;background:#f3f4f8;margin:0}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:12px;box-shadow:0 2px 12px #0002}
h1{font-size:1.3rem}h2{font-size:1rem;margin-top:1.5rem}ul{padding-left:1.2rem}li{margin:.4rem 0}
code{color:#666;font-size:.8em}label.field{display:block;margin:.6rem 0}
input[type=text],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
.error{color:#b00020;font-weight:600}.buttons{display:flex;gap:1rem;margin-top:1.5rem}
button{flex:1;padding:.7rem;font-size:1rem;border-radius:6px;border:1px solid #888;cursor:pointer}
button[value=approve]{background:#5865f2;color:#fff;border-color:#5865f2}`

var consentTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} - sdkpp</title><style>` + pageStyle + `</style></head>
<body><main>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{range .Details}}<p>{{.}}</p>
{{end}}<form method="post" action="{{.Action}}">
{{range $name, $value := .Hidden}}<input type="hidden" name="{{$name}}" value="{{$value}}">
{{end}}<input type="hidden" name="csrf_token" value="{{.CSRF}}">
{{if .User}}<p>Signed in as <strong>{{.User}}</strong>.</p>
{{else}}<p>Log in to continue.</p>
<label class="field">Username <input type="text" name="username" autocomplete="username" required></label>
<label class="field">Password <input type="password" name="password" autocomplete="current-password" required></label>
{{end}}{{if .Submit}}<div class="buttons">{{if .Decline}}<button type="submit" name="action" value="deny" formnovalidate>{{.Decline}}</button>{{end}}<button type="submit" name="action" value="approve">{{.Submit}}</button></div>
{{else}}<h2>This will allow {{.AppName}} to:</h2>
<ul>
{{range .Scopes}}<li>{{if .Optional}}<label><input type="checkbox" name="grant_scope" value="{{.Name}}" checked> {{.Description}}</label>{{else}}{{.Description}}{{end}} <code>{{.Name}}</code></li>
{{end}}</ul>
{{if .Unavailable}}<p>Not available to this application: {{range .Unavailable}}<code>{{.}}</code> {{end}}</p>{{end}}
<div class="buttons"><button type="submit" name="action" value="deny" formnovalidate>Deny</button><button type="submit" name="action" value="approve">Approve</button></div>
{{end}}</form>
</main></body></html>
`))

var askCodeTemplate = template.Must(template.New("ask").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Connect a device - sdkpp</title><style>` + pageStyle + `</style></head>
<body><main>
<h1>Connect a device</h1>
{{if .}}<p class="error" role="alert">{{.}}</p>{{end}}
<form method="get" action="/activate">
<label class="field">Enter the code shown on your device <input type="text" name="user_code" autocomplete="off" required></label>
<div class="buttons"><button type="submit" value="approve">Continue</button></div>
</form>
</main></body></html>
`))

var messageTemplate = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Title}} - sdkpp</title><style>` + pageStyle + `</style></head>
<body><main><h1>{{.Title}}</h1><p{{if .Error}} class="error" role="alert"{{end}}>{{.Text}}</p></main></body></html>
`))

type message struct {
	Title, Text string
	Error       bool
}

func writeHTML(w http.ResponseWriter, status int, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = t.Execute(w, data)
}

func errorPage(w http.ResponseWriter, status int, text string) {
	writeHTML(w, status, messageTemplate, message{Title: "Something went wrong", Text: text, Error: true})
}

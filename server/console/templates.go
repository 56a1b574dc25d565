package console

import (
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// layout is every page's frame: the navigation for a signed-in operator, then the page's
// "content" template.
const layout = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} - sdkpp console</title><style>` + style + `</style></head>
<body>
<header><strong>sdkpp operator console</strong>
{{if .Op}}<nav>
<a href="/console/players"{{if eq .Name "players"}} aria-current="page"{{end}}>Players</a>
<a href="/console/lobbies"{{if or (eq .Name "lobbies") (eq .Name "lobby")}} aria-current="page"{{end}}>Lobbies</a>
<a href="/console/guilds"{{if or (eq .Name "guilds") (eq .Name "guild")}} aria-current="page"{{end}}>Guilds</a>
<a href="/console/apps"{{if or (eq .Name "apps") (eq .Name "app")}} aria-current="page"{{end}}>Applications</a>
<a href="/console/nodes"{{if eq .Name "nodes"}} aria-current="page"{{end}}>Cluster</a>
<a href="/console/audit"{{if eq .Name "audit"}} aria-current="page"{{end}}>Audit log</a>
</nav>
<form class="who" method="post" action="/console/signout"><input type="hidden" name="csrf_token" value="{{.CSRF}}">
<span id="operator">{{.Op.Username}} ({{.Op.Role}})</span> <button type="submit">Sign out</button></form>{{end}}
</header>
<main><h1>{{.Title}}</h1>
{{template "content" .}}
</main></body></html>`

const style = `body{font-family:system-ui,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{display:flex;gap:1.5em;align-items:center;background:#1d2330;color:#fff;padding:.7em 1.2em}
header a{color:#c9d4ff;text-decoration:none;margin-right:1em;white-space:nowrap}header a[aria-current]{color:#fff;text-decoration:underline}
header nav{display:flex}header .who{margin-left:auto}main{padding:1em 1.5em;max-width:70em}
table{border-collapse:collapse;background:#fff;margin:.5em 0 1.5em;width:100%}
th,td{border:1px solid #d5d9e0;padding:.35em .6em;text-align:left;vertical-align:top;font-size:.92em}
th{background:#eceff4}code{font-size:.9em}.error{color:#a00;font-weight:600}.banned{color:#a00;font-weight:700}
.state-failed{color:#a00;font-weight:600}.node-down{color:#a00;font-weight:600}.node-up{color:#070}.state-delivered{color:#070}.state-pending{color:#a60}
form.inline{display:inline}label{margin-right:.5em}input,select,button{font-size:1em;padding:.25em .5em}
.signin{background:#fff;border:1px solid #d5d9e0;padding:1.2em;max-width:22em}.signin label{display:block;margin:.6em 0 .2em}`

// pages are the templates of the pages by name, each with its title.
var pages = map[string]struct{ title, content string }{
	"signin": {"Sign in", `{{with .Data}}{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form class="signin" method="post" action="/console/signin"><input type="hidden" name="csrf_token" value="{{$.CSRF}}">
<label for="username">Operator</label><input id="username" name="username" autocomplete="username" value="{{.Username}}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<p><button id="signin" type="submit">Sign in</button></p></form>{{end}}`},

	"error": {"Not done", `<p class="error" role="alert" id="error">{{.Data}}</p><p><a href="/console/players">Back to the console</a></p>`},

	"players": {"Players", `{{with .Data}}<form method="get" action="/console/players"><label for="q">Player id or username</label>
<input id="q" name="q" value="{{.Query}}"> <button id="find" type="submit">Find</button></form>
{{with .User}}<h2 id="player">{{.Username}}{{if .GlobalName}} ({{.GlobalName}}){{end}}</h2>
<table><tr><th>Id</th><td><code>{{.ID}}</code></td></tr>
<tr><th>Created</th><td>{{when .CreatedAt}}</td></tr>
<tr><th>Kind</th><td>{{if .Bot}}bot{{else if .Provisional}}provisional (application {{.ProvisionalAppID}}){{else}}full account{{end}}</td></tr>
<tr><th>Status</th><td id="status">{{if $.Data.Banned}}<span class="banned">banned {{if .BanPermanent}}permanently{{else}}until {{when .BannedUntil}}{{end}}</span>{{else}}active{{end}}</td></tr></table>
{{if $.Data.CanModerate}}{{if $.Data.Banned}}<form class="inline" method="post" action="/console/players/{{.ID}}/unban">
<input type="hidden" name="csrf_token" value="{{$.CSRF}}"><button id="unban" type="submit">Unban</button></form>
{{else}}<form class="inline" method="post" action="/console/players/{{.ID}}/ban"><input type="hidden" name="csrf_token" value="{{$.CSRF}}">
<label for="duration">Ban for</label><select id="duration" name="duration"><option value="">ever</option><option value="24h">1 day</option>
<option value="168h">7 days</option><option value="720h">30 days</option></select> <button id="ban" type="submit">Ban</button></form>{{end}}{{end}}
{{end}}
{{if .User}}<h2>Linked applications</h2>{{if .Apps}}<table id="apps"><tr><th>Application</th><th>Scopes</th><th>Since</th>{{if .CanModerate}}<th></th>{{end}}</tr>
{{range .Apps}}<tr><td><a href="/console/apps/{{.Auth.AppID}}">{{.Name}}</a></td><td>{{join .Auth.Scopes}}</td><td>{{when .Auth.CreatedAt}}</td>
{{if $.Data.CanModerate}}<td>{{if not .Auth.ParentID}}<form class="inline" method="post" action="/console/players/{{$.Data.User.ID}}/revoke">
<input type="hidden" name="csrf_token" value="{{$.CSRF}}"><input type="hidden" name="app_id" value="{{.Auth.AppID}}">
<button type="submit">Revoke tokens</button></form>{{end}}</td>{{end}}</tr>{{end}}</table>{{else}}<p>None.</p>{{end}}
<h2>Live gateway sessions</h2>{{if .Sessions}}<table id="sessions"><tr><th>Node</th><th>Application</th><th>Since</th><th>State</th></tr>
{{range .Sessions}}<tr><td>{{.Node}}</td><td>{{.AppName}}</td><td>{{when .Since}}</td><td>{{if .Connected}}connected{{else}}waiting to resume{{end}}</td></tr>{{end}}</table>
{{else}}<p id="no-sessions">None.</p>{{end}}
<h2>Relationships</h2>{{if .Relationships}}<table><tr><th>Kind</th><th>Count</th></tr>{{range .Relationships}}<tr><td>{{.Type}}</td><td>{{.Count}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}{{end}}{{end}}`},

	"lobbies": {"Lobbies", `<form method="get" action="/console/lobbies"><label for="id">Lobby id</label><input id="id" name="id"> <button type="submit">Open</button></form>
<h2>Recently active</h2>{{with .Data.Lobbies}}<table><tr><th>Lobby</th><th>Application</th><th>Metadata</th><th>Last activity</th></tr>
{{range .}}<tr><td><a href="/console/lobbies/{{.ID}}">{{.ID}}</a></td><td>{{.AppID}}</td><td>{{props .Metadata}}</td><td>{{when .LastActivityAt}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}`},

	"lobby": {"Lobby", `{{with .Data}}<table><tr><th>Id</th><td><code>{{.Lobby.ID}}</code></td></tr><tr><th>Application</th><td><a href="/console/apps/{{.Lobby.AppID}}">{{.AppName}}</a></td></tr>
<tr><th>Metadata</th><td>{{props .Lobby.Metadata}}</td></tr><tr><th>Last activity</th><td>{{when .Lobby.LastActivityAt}}</td></tr><tr><th>Expires</th><td>{{when .Lobby.ExpiresAt}}</td></tr></table>
<h2>Members</h2>{{if .Members}}<table id="members"><tr><th>Player</th><th>Metadata</th><th>Flags</th><th>Joined</th></tr>
{{range .Members}}<tr><td><a href="/console/players?q={{.UserID}}">{{.Username}}</a>{{if .AdditionalName}} ({{.AdditionalName}}){{end}}</td><td>{{props .Metadata}}</td><td>{{.Flags}}</td><td>{{when .JoinedAt}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}
<h2>Recent messages</h2>{{if .Messages}}<table id="messages"><tr><th>Sent</th><th>Author</th><th>Content</th><th>Metadata</th><th>Moderation metadata</th><th>Flags</th></tr>
{{range .Messages}}<tr><td>{{when .CreatedAt}}</td><td><a href="/console/players?q={{.AuthorID}}">{{.Author}}</a></td><td class="content">{{.Content}}</td><td>{{props .Metadata}}</td><td class="moderation">{{props .ModerationMetadata}}</td><td>{{.Flags}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}{{end}}`},

	"guilds": {"Guilds", `<form method="get" action="/console/guilds"><label for="id">Guild id</label><input id="id" name="id"> <button type="submit">Open</button></form>
<h2>Newest</h2>{{with .Data.Guilds}}<table id="guilds"><tr><th>Guild</th><th>Id</th><th>Created</th></tr>
{{range .}}<tr><td><a href="/console/guilds/{{.ID}}">{{.Name}}</a></td><td><code>{{.ID}}</code></td><td>{{when .CreatedAt}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}`},

	"guild": {"Guild", `{{with .Data}}<h2 id="guild-name">{{.Guild.Name}}</h2><table><tr><th>Id</th><td><code>{{.Guild.ID}}</code></td></tr>
<tr><th>Owner</th><td><a href="/console/players?q={{.Guild.OwnerID}}">{{.Owner}}</a></td></tr><tr><th>Created</th><td>{{when .Guild.CreatedAt}}</td></tr>
<tr><th>Features</th><td id="features">{{join .Features}}</td></tr></table>
<h2>Channels</h2>{{if .Channels}}<table id="channels"><tr><th>Channel</th><th>Type</th><th>Linked lobby</th></tr>
{{range .Channels}}<tr><td>#{{.Name}}</td><td>{{chanType .Type}}</td><td>{{if .Lobby}}<a href="/console/lobbies/{{.Lobby}}">{{.Lobby}}</a>{{end}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}
<h2>Members</h2>{{if .Members}}<table id="members"><tr><th>Player</th><th>Nickname</th><th>Manages channels</th><th>Joined</th></tr>
{{range .Members}}<tr><td><a href="/console/players?q={{.UserID}}">{{.Username}}</a></td><td>{{.Nick}}</td><td>{{if or .ManageChannels (eq .UserID $.Data.Guild.OwnerID)}}yes{{end}}</td><td>{{when .JoinedAt}}</td></tr>{{end}}</table>
{{if .MoreMembers}}<p>The first {{len .Members}} members are shown.</p>{{end}}{{else}}<p>None.</p>{{end}}
<h2>Recent messages</h2><p>Guild messages carry no application moderation metadata (only game direct messages and lobby messages do); shown is what moderating one looks at.</p>
{{if .Messages}}<table id="messages"><tr><th>Sent</th><th>Channel</th><th>Author</th><th>Content</th><th>Mentions</th><th>Reference</th><th>Edited</th></tr>
{{range .Messages}}<tr><td>{{when .CreatedAt}}</td><td>#{{.Channel}}</td><td><a href="/console/players?q={{.AuthorID}}">{{.Author}}</a></td><td class="content">{{.Content}}</td>
<td class="mentions">{{join .Mentions}}</td><td>{{with .Reference}}{{refKind .Type}} <code>{{.MessageID}}</code>{{end}}</td><td>{{when .EditedAt}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}
<h2>Guild audit log</h2>{{if .Audit}}<table id="guild-audit"><tr><th>When</th><th>By</th><th>Action type</th><th>Target</th><th>Options</th></tr>
{{range .Audit}}<tr><td>{{when .CreatedAt}}</td><td>{{.User}}</td><td>{{.ActionType}}</td><td>{{if .TargetID}}<code>{{.TargetID}}</code>{{end}}</td><td><code>{{printf "%s" .Options}}</code></td></tr>{{end}}</table>{{else}}<p>Nothing yet.</p>{{end}}{{end}}`},

	"apps": {"Applications", `{{with .Data.Apps}}<table><tr><th>Application</th><th>Id</th><th>Webhook URL</th></tr>
{{range .}}<tr><td><a href="/console/apps/{{.ID}}">{{.Name}}</a></td><td><code>{{.ID}}</code></td><td>{{or .WebhookURL "none"}}</td></tr>{{end}}</table>{{else}}<p>None.</p>{{end}}`},

	"app": {"Application", `{{with .Data}}<h2>{{.App.Name}}</h2><table><tr><th>Id</th><td><code>{{.App.ID}}</code></td></tr>
<tr><th>Redirect URIs</th><td>{{range .App.RedirectURIs}}<div><code>{{.}}</code></div>{{else}}none{{end}}</td></tr>
<tr><th>Webhook URL</th><td id="webhook-url">{{or .App.WebhookURL "none"}}</td></tr></table>
<h2>Webhook deliveries</h2>{{if .Deliveries}}<table id="deliveries"><tr><th>Delivery</th><th>Event</th><th>State</th><th>Attempts</th><th>Last error</th><th>Queued</th><th>Next attempt / delivered</th>{{if .CanRetry}}<th></th>{{end}}</tr>
{{range .Deliveries}}<tr id="delivery-{{.ID}}"><td><code>{{.ID}}</code></td><td>{{.EventType}}</td><td class="state state-{{.State}}">{{.State}}</td><td>{{.Attempts}}</td><td>{{.LastError}}</td><td>{{when .CreatedAt}}</td>
<td>{{if eq .State "delivered"}}{{when .DeliveredAt}}{{else if eq .State "pending"}}{{when .NextAttemptAt}}{{end}}</td>
{{if $.Data.CanRetry}}<td>{{if eq .State "failed"}}<form class="inline" method="post" action="/console/apps/{{.AppID}}/webhooks/{{.ID}}/retry">
<input type="hidden" name="csrf_token" value="{{$.CSRF}}"><button class="retry" type="submit">Retry</button></form>{{end}}</td>{{end}}</tr>{{end}}</table>
{{else}}<p>None.</p>{{end}}{{end}}`},

	"nodes": {"Cluster", `{{with .Data}}<p>Every node writes its row on a heartbeat; a node whose last heartbeat is older than {{.DownAfter}} is shown down.</p>
<table id="nodes"><tr><th>Node</th><th>Address</th><th>Started</th><th>Gateway sessions</th><th>Voice calls</th><th>Last heartbeat</th><th>State</th></tr>
{{range .Nodes}}<tr id="node-{{.ID}}"><td>{{.ID}}{{if .Self}} (this node){{end}}</td><td>{{.Address}}</td><td>{{when .StartedAt}}</td><td class="sessions">{{.Sessions}}</td>
<td class="calls">{{.Calls}}</td><td>{{when .UpdatedAt}}</td><td class="state {{if .Up}}node-up{{else}}node-down{{end}}">{{if .Up}}up{{else}}down{{end}}</td></tr>{{end}}</table>{{end}}`},

	"audit": {"Audit log", `{{with .Data.Actions}}<table id="audit"><tr><th>When</th><th>Operator</th><th>Action</th><th>Target</th><th>Detail</th></tr>
{{range .}}<tr><td>{{when .CreatedAt}}</td><td>{{.Operator}}</td><td class="action">{{.Action}}</td><td>{{.Target}}</td><td>{{.Detail}}</td></tr>{{end}}</table>{{else}}<p>Nothing yet.</p>{{end}}`},
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"join":     func(s []string) string { return strings.Join(s, " ") },
	"refKind":  referenceKind,
	"chanType": channelType,
	// props shows a string map as key=value pairs, by key.
	"props": func(m map[string]string) string {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + "=" + m[k])
		}
		return b.String()
	},
}

// templates are the parsed pages by name.
var templates = func() map[string]*template.Template {
	base := template.Must(template.New("layout").Funcs(funcs).Parse(layout))
	out := map[string]*template.Template{}
	for name, p := range pages {
		out[name] = template.Must(template.Must(base.Clone()).New("content").Parse(p.content))
	}
	return out
}()

// view is what the layout is executed with.
type view struct {
	Name, Title, CSRF string
	Op                any
	Data              any
}

// render writes the page name with data, with the console's protections: no framing, no
// caching, no referrer, nothing but inline styles.
func (h *Handler) render(w http.ResponseWriter, status int, name string, rq *request, data any) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	v := view{Name: name, Title: pages[name].title, CSRF: rq.csrf, Data: data}
	if rq.op != nil {
		v.Op = rq.op
	}
	if err := templates[name].ExecuteTemplate(w, "layout", v); err != nil {
		h.Logger.Error("console: render", "page", name, "err", err)
	}
}

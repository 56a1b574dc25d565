package messages

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// PermAttachFiles lets a member upload files with messages (the platform's bit).
const PermAttachFiles uint64 = 1 << 15

// upload is a files[n] part of a message request, spooled to a temporary file as it is read:
// a request's memory is a copy buffer, whatever the size of its files.
type upload struct {
	n        uint64
	filename string // as the part's Content-Disposition gives it
	file     *os.File
	size     int64
	head     []byte // the first bytes, for http.DetectContentType
}

// spool reads a part into a temporary file, up to limit bytes; tooLarge when it has more.
func spool(p io.Reader, limit int64) (f *os.File, size int64, head []byte, tooLarge bool, err error) {
	if f, err = os.CreateTemp("", "sdkpp-upload-*"); err != nil {
		return nil, 0, nil, false, fmt.Errorf("messages: spool upload: %w", err)
	}
	os.Remove(f.Name()) // gone once closed, whatever happens to the request
	var sniff sniffer
	in := &readError{r: io.LimitReader(p, limit+1)}
	size, err = io.Copy(f, io.TeeReader(in, &sniff))
	if in.err != nil {
		err = httpx.BodyError(in.err) // the request's fault (cut short, too large), not the disk's
	}
	if err == nil && size > limit {
		tooLarge = true
	}
	if err == nil && !tooLarge {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil || tooLarge {
		f.Close()
		return nil, 0, nil, tooLarge, err
	}
	return f, size, sniff.b, false, nil
}

// readError keeps the error of its reader's last failed read.
type readError struct {
	r   io.Reader
	err error
}

func (e *readError) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// sniffer keeps the first 512 bytes written to it (what http.DetectContentType reads).
type sniffer struct{ b []byte }

func (s *sniffer) Write(p []byte) (int, error) {
	if n := 512 - len(s.b); n > 0 {
		s.b = append(s.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// Close removes the request's spooled files.
func (req *messageRequest) Close() {
	for _, f := range req.files {
		f.file.Close()
	}
}

// messageRequest is a read message request body: its JSON fields and its files in part order.
type messageRequest struct {
	body        wire.GuildMessageRequest
	attachments []wire.AttachmentRequest // nil when the request has no attachments array
	listed      bool                     // the request has an attachments array (maybe empty)
	files       []upload
	payload     []byte // the payload_json part of a multipart body, nil when none
}

// readMessageRequest reads the body of a message request: JSON, or multipart/form-data with a
// payload_json part (the JSON body, {} when absent) and up to wire.MaxAttachments files[n]
// parts. The multipart body is bounded by wire.MaxMessageUploadBytes and each file by
// wire.MaxUploadBytes (rule LIM-1); past either it is a 413 40005, refused before it is read
// whole.
func readMessageRequest(r *http.Request) (*messageRequest, error) {
	out := &messageRequest{}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if err := httpx.DecodeJSON(r, &out.body); err != nil {
			return nil, err
		}
		return out, out.readAttachments()
	}
	if r.ContentLength > wire.MaxMessageUploadBytes {
		return nil, wire.RequestTooLarge()
	}
	r.Body = http.MaxBytesReader(nil, r.Body, wire.MaxMessageUploadBytes)
	var payload []byte
	seen := map[uint64]bool{}
	err := httpx.EachPart(r, params["boundary"], func(p *multipart.Part) error {
		name := p.FormName()
		if name == wire.PayloadJSONPart {
			if payload != nil {
				return wire.InvalidAt(name, "MULTIPART_DUPLICATE", "Give this part once.")
			}
			b, tooLarge, err := httpx.ReadPart(p, httpx.MaxBody)
			if err != nil {
				return err
			}
			if tooLarge {
				return wire.RequestTooLarge()
			}
			payload = b
			return nil
		}
		n, ok := wire.ParseFilePart(name)
		switch {
		case !ok:
			return wire.InvalidAt("", "MULTIPART_UNKNOWN_PART",
				"Unknown part "+strconv.Quote(clip(name, 40))+": give payload_json and files[n] parts.")
		case seen[n]:
			return wire.InvalidAt("", "MULTIPART_DUPLICATE", "Give part "+wire.FilePart(n)+" once.")
		case len(out.files) == wire.MaxAttachments:
			return wire.TooManyAttachments()
		}
		seen[n] = true
		f, size, head, tooLarge, err := spool(p, wire.MaxUploadBytes)
		if err != nil {
			return err
		}
		if tooLarge {
			return wire.RequestTooLarge() // rule LIM-1
		}
		out.files = append(out.files, upload{n: n, filename: partFilename(p), file: f, size: size, head: head})
		return nil
	})
	if err != nil {
		out.Close()
		return nil, err
	}
	if payload != nil {
		if err := json.Unmarshal(payload, &out.body); err != nil {
			out.Close()
			return nil, wire.InvalidJSON()
		}
	}
	out.payload = payload
	if err := out.readAttachments(); err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

// readAttachments reads the body's attachments array.
func (req *messageRequest) readAttachments() error {
	var err error
	req.attachments, err = wire.ParseAttachmentRequests(req.body.Attachments)
	req.listed = len(req.body.Attachments) > 0 && string(req.body.Attachments) != "null"
	return err
}

// partFilename is the filename parameter of a part's Content-Disposition as given (with any
// path: wire.SanitizeFilename cuts it), "" when it has none.
func partFilename(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

// clip cuts s to at most n bytes, on a rune boundary when s is UTF-8.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// newAttachment makes the attachment of file f with its entry e (nil when the request has
// none), at position pos. at names e for errors (attachments.n), or the file's part.
func (s *Service) newAttachment(f *upload, e *wire.AttachmentRequest, at string, pos int) (store.GuildAttachment, error) {
	name, field := f.filename, wire.FilePart(f.n)
	if e != nil && e.Filename != nil {
		name, field = *e.Filename, at+".filename"
	}
	clean, ok := wire.SanitizeFilename(name)
	if !ok {
		return store.GuildAttachment{}, wire.InvalidAt(field, "FILENAME_INVALID", "The filename is not UTF-8.")
	}
	a := store.GuildAttachment{ID: s.IDs.Next(), Position: pos, Filename: clean, ContentType: http.DetectContentType(f.head),
		Size: int(f.size), Body: f.file}
	if strings.HasPrefix(clean, wire.SpoilerPrefix) {
		a.Flags |= wire.AttachmentFlagIsSpoiler // rule ATT-2: the legacy prefix
	}
	if e != nil {
		if e.Description != nil {
			a.Description = *e.Description
		}
		if e.IsSpoiler != nil && *e.IsSpoiler {
			a.Flags |= wire.AttachmentFlagIsSpoiler
		}
	}
	if strings.HasPrefix(a.ContentType, "image/") {
		if c, _, err := image.DecodeConfig(bufio.NewReader(f.file)); err == nil {
			a.Width, a.Height = c.Width, c.Height
		}
		if _, err := f.file.Seek(0, io.SeekStart); err != nil {
			return store.GuildAttachment{}, fmt.Errorf("messages: rewind upload: %w", err)
		}
	}
	return a, nil
}

// attachmentsOf builds a message's attachments from a request: each attachments entry in order,
// kept from existing (an attachment of the message being edited, updated with the entry's
// description and is_spoiler: rule ATT-1) or made from the request's file of that index; then
// the files no entry names. Without an attachments array (listed false) existing are kept
// first. More than wire.MaxAttachments in all is a 400 30015.
func (s *Service) attachmentsOf(req *messageRequest, existing []store.GuildAttachment) ([]store.GuildAttachment, error) {
	var out []store.GuildAttachment
	if !req.listed {
		out = append(out, existing...)
		for i := range out {
			out[i].Position = i
		}
	}
	used := make([]bool, len(req.files))
	for i := range req.attachments {
		e := &req.attachments[i]
		at := "attachments." + strconv.Itoa(i)
		if j := indexOf(existing, e.ID); j >= 0 {
			a := existing[j]
			a.Position = len(out)
			if e.Description != nil {
				a.Description = *e.Description
			}
			if e.IsSpoiler != nil {
				a.Flags &^= wire.AttachmentFlagIsSpoiler
				if *e.IsSpoiler {
					a.Flags |= wire.AttachmentFlagIsSpoiler
				}
			}
			out = append(out, a)
			continue
		}
		k := -1
		for j := range req.files {
			if req.files[j].n == e.ID {
				k = j
			}
		}
		if k < 0 {
			return nil, wire.InvalidAt(at+".id", "ATTACHMENT_NOT_FOUND",
				"No file "+wire.FilePart(e.ID)+" in the request, nor an attachment of the message with this id.")
		}
		used[k] = true
		a, err := s.newAttachment(&req.files[k], e, at, len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	for k := range req.files {
		if used[k] {
			continue
		}
		a, err := s.newAttachment(&req.files[k], nil, "", len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) > wire.MaxAttachments {
		return nil, wire.TooManyAttachments()
	}
	return out, nil
}

// indexOf returns the index of the attachment with id in list, -1 when there is none.
func indexOf(list []store.GuildAttachment, id uint64) int {
	for i := range list {
		if list[i].ID == id {
			return i
		}
	}
	return -1
}

// attachmentObjects are the wire forms of a message's attachments.
func (s *Service) attachmentObjects(list []store.GuildAttachment) []wire.Attachment {
	out := make([]wire.Attachment, 0, len(list))
	for _, a := range list {
		out = append(out, s.attachmentObject(&a))
	}
	return out
}

// attachmentObject is the wire form of a, with the URL that serves its bytes.
func (s *Service) attachmentObject(a *store.GuildAttachment) wire.Attachment {
	path := "/attachments/" + strconv.FormatUint(a.ChannelID, 10) + "/" + strconv.FormatUint(a.ID, 10) + "/" +
		url.PathEscape(a.Filename)
	u := s.URLs.Sign(s.PublicURL+path, path)
	w := wire.Attachment{ID: wire.Snowflake(a.ID), Filename: a.Filename, Description: a.Description,
		ContentType: a.ContentType, Size: a.Size, URL: u, ProxyURL: u, Flags: a.Flags}
	if a.Width > 0 && a.Height > 0 {
		width, height := a.Width, a.Height
		w.Width, w.Height = &width, &height
	}
	return w
}

// saveMessage writes m (inserted when insert is set, else updated) and, when atts is not nil,
// makes atts its attachments, in one transaction. The uploads' bytes are stored before it, a
// chunk at a time (store.PutAttachmentChunks), so that the transaction does not hold the store's
// writer while they are written; they are removed again when the message's write fails.
func (s *Service) saveMessage(ctx context.Context, m *store.GuildMessage, insert bool, atts []store.GuildAttachment) (err error) {
	var stored []uint64
	defer func() {
		if err == nil {
			return
		}
		for _, id := range stored {
			// What is left here (the store failing again) SweepAttachmentChunks removes later.
			_ = s.Store.DeleteAttachmentChunks(context.WithoutCancel(ctx), id)
		}
	}()
	for i := range atts {
		a := &atts[i]
		if a.Body == nil {
			continue
		}
		stored = append(stored, a.ID)
		if err := s.Store.PutAttachmentChunks(ctx, a.ID, a.Body); err != nil {
			return err
		}
		a.Body, a.Stored = nil, true
	}
	return s.Store.WithTx(ctx, func(st store.Store) error {
		write := st.UpdateGuildMessage
		if insert {
			write = st.InsertGuildMessage
		}
		if err := write(ctx, m); err != nil {
			return err
		}
		if atts == nil {
			return nil
		}
		return st.SetGuildAttachments(ctx, m.ChannelID, m.ID, atts)
	})
}

// RegisterAttachments adds the route that serves attachments' bytes (at the web base, not the
// API's): GET /attachments/{channel_id}/{attachment_id}/{filename}?ex=&is=&hm=. Anyone with the
// URL may read the file until it expires, as on the platform's CDN; a URL that was not signed
// here (a forged or changed one) or has expired gets 404.
func (s *Service) RegisterAttachments(mux httpx.Router) {
	mux.HandleFunc("GET /attachments/{channel_id}/{attachment_id}/{filename}", s.serveAttachment)
}

// serveAttachment serves an attachment's bytes with their (sniffed) content type, nosniff, and a
// Content-Disposition of attachment for anything but an image; 404 for an unknown one, a
// filename that is not the attachment's, or a URL not signed (signedurl) or expired.
func (s *Service) serveAttachment(w http.ResponseWriter, r *http.Request) {
	ch, ok1 := wire.ParseSnowflake(r.PathValue("channel_id"))
	id, ok2 := wire.ParseSnowflake(r.PathValue("attachment_id"))
	// The path as attachmentObjects signed it.
	path := "/attachments/" + strconv.FormatUint(uint64(ch), 10) + "/" + strconv.FormatUint(uint64(id), 10) + "/" +
		url.PathEscape(r.PathValue("filename"))
	if !ok1 || !ok2 || !s.URLs.Valid(path, r.URL.Query()) {
		http.NotFound(w, r)
		return
	}
	a, body, err := s.Store.OpenGuildAttachment(r.Context(), uint64(ch), uint64(id))
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Filename != r.PathValue("filename")) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		httpx.Error(w, r, s.Logger, fmt.Errorf("guilds: serve attachment %d: %w", uint64(id), err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=86400")
	if !inlineImage(a.ContentType) {
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename}))
	}
	http.ServeContent(w, r, "", time.Time{}, body)
}

// inlineImage tells whether a browser may show an attachment of this type inline: raster images
// (SVG, which can hold scripts, is not one).
func inlineImage(contentType string) bool {
	switch contentType {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp":
		return true
	}
	return false
}

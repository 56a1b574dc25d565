package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Attachments of guild channel messages (rules ATT-1, ATT-2, LIM-1).
//
// POST /channels/{id}/messages takes a JSON body, or multipart/form-data with a payload_json part
// (the JSON body) and files[n] parts; the payload's attachments array describes the files, the
// id of an entry being the n of its files[n] part. PATCH /channels/{id}/messages/{mid} takes the
// same; there an entry whose id is an existing attachment's keeps that attachment (its
// description and is_spoiler may change, rule ATT-1), and an attachments array leaves out the
// attachments the message loses. The files are served at the web base under
// /attachments/{channel_id}/{attachment_id}/{filename}.

// Limits of attachments.
const (
	// MaxAttachments is how many files one message carries at most.
	MaxAttachments = 10
	// MaxUploadBytes is the default upload size limit of one file (rule LIM-1: 20 MiB, for
	// users, bots, webhooks and interaction responses alike).
	MaxUploadBytes = 20 << 20
	// MaxMessageUploadBytes bounds the whole multipart body of a message: MaxAttachments files
	// of MaxUploadBytes, a payload_json of at most 1 MiB, and the multipart framing.
	MaxMessageUploadBytes = MaxAttachments*MaxUploadBytes + 2<<20
	// MaxAttachmentDescriptionChars bounds an attachment's description (the platform's, alt
	// text).
	MaxAttachmentDescriptionChars = 1024
	// MaxAttachmentFilenameBytes bounds an attachment's filename (sdkpp's bound).
	MaxAttachmentFilenameBytes = 255
)

// AttachmentFlagIsSpoiler marks an attachment shown behind a spoiler (rule ATT-2). It is
// read-only: a request's flags cannot set it; is_spoiler or a SPOILER_ filename prefix does.
const AttachmentFlagIsSpoiler = 1 << 3

// SpoilerPrefix is the legacy filename prefix that marks a spoiler (rule ATT-2).
const SpoilerPrefix = "SPOILER_"

// CodeMaxAttachments is "Maximum number of attachments in a message reached (10)" (HTTP 400).
const CodeMaxAttachments = 30015

// TooManyAttachments is the 400 30015 of a message with more than MaxAttachments files.
func TooManyAttachments() *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeMaxAttachments,
		Message: "Maximum number of attachments in a message reached (" + strconv.Itoa(MaxAttachments) + ")"}
}

// Attachment is a file attached to a message. URL and ProxyURL serve its bytes; Width and
// Height are set for PNG, JPEG and GIF images.
type Attachment struct {
	ID          Snowflake `json:"id"`
	Filename    string    `json:"filename"`
	Description string    `json:"description,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
	Size        int       `json:"size"`
	URL         string    `json:"url"`
	ProxyURL    string    `json:"proxy_url"`
	Width       *int      `json:"width,omitempty"`
	Height      *int      `json:"height,omitempty"`
	Flags       int       `json:"flags,omitempty"`
}

// AttachmentRequest is an entry of a message request's attachments array, read with
// ParseAttachmentRequests. ID is the n of a files[n] part, or (when editing) an existing
// attachment's id. Description is nil when the entry leaves it out, "" for null; IsSpoiler nil
// when left out. Flags are read (an integer) and ignored: IS_SPOILER is read-only (rule ATT-2).
type AttachmentRequest struct {
	ID          uint64
	Filename    *string
	Description *string
	IsSpoiler   *bool
}

// ParseAttachmentRequests reads a message request's attachments array (nil raw: absent, nil
// result). A malformed entry is a 400 50035 naming its field (attachments.n.field); an id given
// twice too.
func ParseAttachmentRequests(raw json.RawMessage) ([]AttachmentRequest, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var entries []json.RawMessage
	if string(raw) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, InvalidAt("attachments", "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")
	}
	if len(entries) > MaxAttachments {
		return nil, TooManyAttachments()
	}
	out := make([]AttachmentRequest, 0, len(entries))
	seen := map[uint64]bool{}
	for i, e := range entries {
		at := "attachments." + strconv.Itoa(i)
		var f struct {
			ID          json.RawMessage `json:"id"`
			Filename    json.RawMessage `json:"filename"`
			Description json.RawMessage `json:"description"`
			IsSpoiler   json.RawMessage `json:"is_spoiler"`
			Flags       json.RawMessage `json:"flags"`
		}
		if err := json.Unmarshal(e, &f); err != nil {
			return nil, InvalidAt(at, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
		}
		var a AttachmentRequest
		id, ok := attachmentID(f.ID)
		if !ok {
			return nil, InvalidAt(at+".id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		if seen[id] {
			return nil, InvalidAt(at+".id", "ATTACHMENT_DUPLICATE", "Each attachment id may be given once.")
		}
		seen[id] = true
		a.ID = id
		if present(f.Filename) {
			var s string
			if json.Unmarshal(f.Filename, &s) != nil {
				return nil, InvalidAt(at+".filename", "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
			}
			a.Filename = &s
		}
		if len(f.Description) > 0 {
			s := ""
			if string(f.Description) != "null" && json.Unmarshal(f.Description, &s) != nil {
				return nil, InvalidAt(at+".description", "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
			}
			if utf8.RuneCountInString(s) > MaxAttachmentDescriptionChars {
				return nil, InvalidAt(at+".description", "BASE_TYPE_MAX_LENGTH",
					"Must be "+strconv.Itoa(MaxAttachmentDescriptionChars)+" or fewer in length.")
			}
			a.Description = &s
		}
		if present(f.IsSpoiler) {
			var b bool
			if json.Unmarshal(f.IsSpoiler, &b) != nil {
				return nil, InvalidAt(at+".is_spoiler", "BOOLEAN_TYPE_COERCE", "Must be either true or false.")
			}
			a.IsSpoiler = &b
		}
		if present(f.Flags) {
			var n uint64
			if json.Unmarshal(f.Flags, &n) != nil {
				return nil, InvalidAt(at+".flags", "NUMBER_TYPE_COERCE", "The value is not int.")
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// present tells whether a field was given, and not as null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// attachmentID reads an attachment id: a non-negative integer, as a JSON number or string.
func attachmentID(raw json.RawMessage) (uint64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false
	}
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// FilePart returns the files[n] part name of n.
func FilePart(n uint64) string { return "files[" + strconv.FormatUint(n, 10) + "]" }

// ParseFilePart reads a files[n] part name into n.
func ParseFilePart(name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, "files[")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, "]")
	if !ok || digits == "" || len(digits) > 19 || strings.TrimLeft(digits, "0123456789") != "" ||
		(len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}

// SanitizeFilename makes a filename of an upload safe to keep and serve: the part after the last
// / or \, control characters and "*:<>?| turned into _, spaces into _ (as the platform does),
// cut to MaxAttachmentFilenameBytes; "unknown" when nothing is left. ok is false for a name that
// is not UTF-8.
func SanitizeFilename(name string) (clean string, ok bool) {
	if !utf8.ValidString(name) {
		return "", false
	}
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f || r == utf8.RuneError || strings.ContainsRune(`"*:<>?|`, r):
			r = '_'
		case r == ' ':
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > MaxAttachmentFilenameBytes {
			break
		}
		b.WriteRune(r)
	}
	clean = b.String()
	if clean == "" || clean == "." || clean == ".." {
		clean = "unknown"
	}
	return clean, true
}

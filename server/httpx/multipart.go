package httpx

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"

	"sdkpp/wire"
)

// LimitBody bounds the request body at n bytes: reading past it fails with *http.MaxBytesError,
// which BodyError turns into a 413.
func LimitBody(n int64, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		h(w, r)
	}
}

// BodyError is the answer to a failed read of a multipart body: 413 past the bound of
// LimitBody, else 400 50035.
func BodyError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return wire.RequestTooLarge()
	}
	return wire.InvalidAt("", "MULTIPART_INVALID", "The multipart/form-data body could not be read.")
}

// EachPart reads a multipart/form-data body with boundary, calling part on each part in order;
// part must read what it wants of the part (the rest is skipped). A body that is not multipart
// is a 400 50035 (413 past the request's bound, see BodyError); part's error ends the reading
// and is returned as it is.
func EachPart(r *http.Request, boundary string, part func(p *multipart.Part) error) error {
	if boundary == "" {
		return wire.InvalidAt("", "MULTIPART_INVALID", "The multipart/form-data content type has no boundary.")
	}
	mr := multipart.NewReader(r.Body, boundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF { // the final boundary; a body that ends before it is an EOF wrapped in an error
			return nil
		}
		if err != nil {
			return BodyError(err)
		}
		if err := part(p); err != nil {
			return err
		}
	}
}

// ReadPart reads a part of at most limit bytes (never nil); tooLarge tells that it has more (b
// is then partial).
func ReadPart(p *multipart.Part, limit int64) (b []byte, tooLarge bool, err error) {
	b, err = io.ReadAll(io.LimitReader(p, limit+1))
	if err != nil {
		return nil, false, BodyError(err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, int64(len(b)) > limit, nil
}

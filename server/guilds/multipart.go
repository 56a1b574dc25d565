package guilds

import (
	"io"
	"mime/multipart"
	"net/http"

	"sdkpp/wire"
)

// eachPart reads a multipart/form-data body with boundary, calling part on each part in order;
// part must read what it wants of the part (the rest is skipped). A body that is not multipart
// is a 400 50035 (413 past the request's bound, see bodyError); part's error ends the reading
// and is returned as it is.
func eachPart(r *http.Request, boundary string, part func(p *multipart.Part) error) error {
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
			return bodyError(err)
		}
		if err := part(p); err != nil {
			return err
		}
	}
}

// readPart reads a part of at most limit bytes (never nil); tooLarge tells that it has more (b
// is then partial).
func readPart(p *multipart.Part, limit int64) (b []byte, tooLarge bool, err error) {
	b, err = io.ReadAll(io.LimitReader(p, limit+1))
	if err != nil {
		return nil, false, bodyError(err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, int64(len(b)) > limit, nil
}

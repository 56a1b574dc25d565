package wire

import "strconv"

// AppendJSON appends r, encoded exactly as encoding/json encodes the struct, to dst: the token
// endpoint answers every token request with one, and encoding/json's reflection costs it more
// than the rest of the encoding (tokencodec_test.go holds the two to agreement).
func (r TokenResponse) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"access_token":`...)
	dst = appendString(dst, r.AccessToken)
	dst = append(dst, `,"token_type":`...)
	dst = appendString(dst, r.TokenType)
	dst = append(dst, `,"expires_in":`...)
	dst = strconv.AppendInt(dst, r.ExpiresIn, 10)
	if r.RefreshToken != "" {
		dst = append(dst, `,"refresh_token":`...)
		dst = appendString(dst, r.RefreshToken)
	}
	dst = append(dst, `,"scope":`...)
	dst = appendString(dst, r.Scope)
	if r.IDToken != "" {
		dst = append(dst, `,"id_token":`...)
		dst = appendString(dst, r.IDToken)
	}
	return append(dst, '}')
}

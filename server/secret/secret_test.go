package secret

import "testing"

func TestPasswordAndHash(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(h, "correct horse") || CheckPassword(h, "wrong") || CheckPassword(nil, "") {
		t.Fatal("password check wrong")
	}
	tok := Token()
	if len(tok) != 43 || !Matches(Hash(tok), tok) || Matches(Hash(tok), tok+"x") || Matches(nil, tok) {
		t.Fatal("token hash check wrong")
	}
}

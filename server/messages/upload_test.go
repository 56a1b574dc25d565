package messages_test

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// pattern is n bytes of a repeating, file-specific pattern.
func pattern(file, n int) io.Reader {
	block := make([]byte, 4096)
	for i := range block {
		block[i] = byte(i*7 + file)
	}
	return io.LimitReader(&repeat{b: block}, int64(n))
}

type repeat struct {
	b   []byte
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

// An upload of ten 20 MiB files is streamed to the store as it is read: the service's heap
// grows by less than 32 MiB, and each file reads back whole.
func TestUploadIsStreamed(t *testing.T) {
	var opts []servertest.Option
	if os.Getenv(servertest.EnvStore) != "postgres" {
		opts = append(opts, servertest.WithDataDir(t.TempDir()))
	}
	f := guildtest.NewBots(t, opts...)
	general := f.Channel("general").ID
	const files, size = wire.MaxAttachments, wire.MaxUploadBytes

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	var writeErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer pw.Close()
		for i := range files {
			w, err := mw.CreateFormFile("files["+strconv.Itoa(i)+"]", "f"+strconv.Itoa(i)+".bin")
			if err == nil {
				_, err = io.Copy(w, pattern(i, size))
			}
			if err != nil {
				writeErr = err
				pw.CloseWithError(err)
				return
			}
		}
		writeErr = mw.Close()
	})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	})
	req, err := http.NewRequest(http.MethodPost, f.MessagesURL(general), pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+f.Alice)
	resp, err := http.DefaultClient.Do(req)
	close(stop)
	sampler.Wait()
	wg.Wait()
	require.NoError(t, err)
	require.NoError(t, writeErr)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var msg wire.GuildMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	grew := int64(peak) - int64(base)
	t.Logf("heap in use: %d MiB before, %d MiB at most during the upload", base>>20, peak>>20)
	assert.Less(t, grew, int64(32<<20), "the heap grew by %d MiB", grew>>20)

	require.Len(t, msg.Attachments, files)
	for i, a := range msg.Attachments {
		require.Equal(t, size, a.Size)
		want := sha256.New()
		io.Copy(want, pattern(i, size))
		res, err := http.Get(a.URL)
		require.NoError(t, err)
		got := sha256.New()
		n, err := io.Copy(got, res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, int64(size), n, "file %d", i)
		require.Equal(t, want.Sum(nil), got.Sum(nil), "file %d", i)
	}
	// A range of a chunked file, across a chunk's end.
	rq, _ := http.NewRequest(http.MethodGet, msg.Attachments[1].URL, nil)
	rq.Header.Set("Range", "bytes=262140-262150")
	res, err := http.DefaultClient.Do(rq)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusPartialContent, res.StatusCode)
	all, _ := io.ReadAll(io.LimitReader(pattern(1, size), 262151))
	assert.Equal(t, all[262140:262151], body)
}

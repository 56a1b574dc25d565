package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idCol reads what database/sql would read into a *uint64 from the drivers' values of an INTEGER
// column, and refuses what it would refuse.
func TestIDColScan(t *testing.T) {
	for _, tc := range []struct {
		src  any
		want uint64
		ok   bool
	}{
		{int64(0), 0, true},
		{int64(1477636521984000011), 1477636521984000011, true},
		{int64(1<<63 - 1), 1<<63 - 1, true},
		{[]byte("42"), 42, true},
		{"18446744073709551615", 18446744073709551615, true},
		{int64(-1), 0, false},
		{nil, 0, false},
		{"x", 0, false},
		{[]byte(""), 0, false},
		{3.5, 0, false},
	} {
		var c idCol
		err := c.Scan(tc.src)
		if !tc.ok {
			assert.Error(t, err, "%T %v", tc.src, tc.src)
			continue
		}
		require.NoError(t, err, "%T %v", tc.src, tc.src)
		assert.Equal(t, tc.want, uint64(c), "%T %v", tc.src, tc.src)
	}
}

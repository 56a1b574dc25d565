// Package stamp formats the timestamps of lobby messages.
package stamp

import "time"

// Layout is the layout of Micro's timestamps: UTC, to the microsecond.
const Layout = "2006-01-02T15:04:05.000000+00:00"

// Micro returns t in UTC as Layout formats it. It makes the timestamp of every lobby message
// sent, where time.Time.Format, which reads its layout anew at each call, cost a message about
// as much as its whole JSON encoding.
func Micro(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(Layout)
	}
	hour, minute, sec := t.Clock()
	var b [len(Layout)]byte
	put := func(at, v, digits int) {
		for i := at + digits - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, int(month), 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, hour, 2)
	b[13] = ':'
	put(14, minute, 2)
	b[16] = ':'
	put(17, sec, 2)
	b[19] = '.'
	put(20, t.Nanosecond()/1000, 6)
	copy(b[26:], "+00:00")
	return string(b[:])
}

package event_test

import "time"

func timeAt(ms int64) time.Time { return time.UnixMilli(1_780_000_000_000 + ms) }

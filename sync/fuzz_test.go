package sync

import (
	"testing"
	"time"
)

// FuzzSchedule checks sync schedule parsing (--sync-schedule,
// OPSEARCH_SYNC_SCHEDULE): any spec gives a scheduler or an error, never a
// panic, and an accepted schedule, with or without jitter, never names a
// next run at or before the time it is asked from.
func FuzzSchedule(f *testing.F) {
	for _, s := range []string{DefaultSpec, "@every 30s", "*/5 * * * *", "0 3 * * 1-5", "@daily", "@hourly",
		"CRON_TZ=Europe/Berlin 0 9 * * *", "TZ=UTC", "0 0 30 2 *", "@every 0s", "61 * * * *", "* * *", ""} {
		f.Add(s)
	}
	from := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		for _, noJitter := range []bool{true, false} {
			s, err := NewScheduler(nil, SchedulerOptions{Spec: spec, NoJitter: noJitter})
			if err != nil {
				continue
			}
			if next := s.sch.Next(from); !next.IsZero() && !next.After(from) {
				t.Fatalf("schedule %q (jitter %v): next run %v is not after %v", spec, !noJitter, next, from)
			}
		}
	})
}

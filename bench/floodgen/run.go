package main

import (
	"math"
	"slices"
	"sync"
	"time"
)

// results are a load's calls as columns, one entry a call.
type results struct {
	// Ms is from when the call was due (open loop) or started (closed) to its end.
	Ms []float64 `json:"ms"`
	// SentLateMs is from when the call was due to when it was sent: the
	// generator's own lateness (0 in a closed loop).
	SentLateMs []float64 `json:"sentLateMs"`
	// Outcome is 0 answered, 1 refused, 2 deadline, 3 other.
	Outcome []int `json:"outcome"`
	// Codes are the gRPC status names (or what ended a call without one).
	Codes []string `json:"codes"`
	// PushbackMs is a refusal's grpc-retry-pushback-ms, or -1.
	PushbackMs []float64 `json:"pushbackMs"`
	// LagP99Ms is how late a 10 ms ticker of the generator ran at p99 while
	// the load lasted: a lateness that shows in every time it measures.
	LagP99Ms float64 `json:"lagP99Ms"`
	// Seconds is how long the load took, from its first call to its last end.
	Seconds float64 `json:"seconds"`
}

type timed struct {
	outcome
	ms, sentLateMs float64
}

func run(l load) (results, error) {
	c, err := newCallers(l)
	if err != nil {
		return results{}, err
	}
	defer c.close()
	lag := watchLag()
	started := time.Now()
	var calls []timed
	if l.Loop == "open" {
		calls = openLoop(c, l.Rate, l.Seconds)
	} else {
		calls = closedLoop(c, l.Callers, l.Seconds)
	}
	r := results{LagP99Ms: lag(), Seconds: time.Since(started).Seconds()}
	for _, t := range calls {
		r.Ms = append(r.Ms, t.ms)
		r.SentLateMs = append(r.SentLateMs, t.sentLateMs)
		r.Outcome = append(r.Outcome, t.kind)
		r.Codes = append(r.Codes, t.code)
		r.PushbackMs = append(r.PushbackMs, t.pushbackMs)
	}
	return r, nil
}

// openLoop sends call i when it is due, at i / rate seconds, whatever came back.
func openLoop(c *callers, rate, seconds float64) []timed {
	total := int(math.Floor(rate * seconds))
	calls := make([]timed, total)
	var wg sync.WaitGroup
	start := time.Now()
	for sent := 0; sent < total; {
		due := min(total, int(time.Since(start).Seconds()*rate)+1)
		for ; sent < due; sent++ {
			i := sent
			dueAt := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
			wg.Go(func() {
				sentLate := time.Since(dueAt)
				o := c.call(i)
				calls[i] = timed{outcome: o, ms: ms(time.Since(dueAt)), sentLateMs: ms(sentLate)}
			})
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	return calls
}

// closedLoop runs callers that each call again once answered, until seconds have passed.
func closedLoop(c *callers, callers int, seconds float64) []timed {
	until := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	each := make([][]timed, callers)
	var wg sync.WaitGroup
	for k := range callers {
		wg.Go(func() {
			for time.Now().Before(until) {
				t := time.Now()
				o := c.call(k)
				each[k] = append(each[k], timed{outcome: o, ms: ms(time.Since(t))})
			}
		})
	}
	wg.Wait()
	return slices.Concat(each...)
}

// watchLag ticks every 10 ms until the returned function is called, which
// answers how late the ticks came at p99, in milliseconds.
func watchLag() func() float64 {
	const every = 10 * time.Millisecond
	stop := make(chan struct{})
	done := make(chan []float64)
	go func() {
		var late []float64
		next := time.Now().Add(every)
		timer := time.NewTimer(every)
		defer timer.Stop()
		for {
			select {
			case <-stop:
				done <- late
				return
			case <-timer.C:
				// Now, not the time the timer sent: the lateness is when this goroutine got to run.
				now := time.Now()
				late = append(late, ms(max(0, now.Sub(next))))
				next = now.Add(every)
				timer.Reset(every)
			}
		}
	}()
	return func() float64 {
		close(stop)
		return percentile(<-done, 99)
	}
}

// percentile is the nearest-rank percentile p of values (0 when there are none).
func percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(values))
	rank := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(len(sorted)-1, max(0, rank))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

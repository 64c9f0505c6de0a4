package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress reports how far a run is on standard error: benchmarks done of
// the total, time elapsed and an estimate of the time left (elapsed / done ×
// remaining). On a terminal it redraws one line with a bar; elsewhere (CI
// logs) it prints a plain line at most every PlainEvery and when the run
// ends. A benchmark is one top-level benchmark of one invocation, counted
// -test.count times.
type Progress struct {
	w    io.Writer
	live bool
	// PlainEvery is the shortest time between two plain lines.
	PlainEvery time.Duration
	now        func() time.Time

	mu          sync.Mutex
	total, done int
	status      string
	start, last time.Time
	stop        chan struct{}
	stopped     sync.WaitGroup
}

// NewProgress returns a Progress writing to w, redrawing a live line when
// live is true.
func NewProgress(w io.Writer, live bool) *Progress {
	return &Progress{w: w, live: live, PlainEvery: 10 * time.Second, now: time.Now}
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Start begins the report with the total number of benchmarks.
func (p *Progress) Start(total int) {
	p.mu.Lock()
	p.total, p.done = total, 0
	p.start = p.now()
	p.last = p.start
	p.mu.Unlock()
	if p.live {
		p.stop = make(chan struct{})
		p.stopped.Add(1)
		go func() {
			defer p.stopped.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-t.C:
					p.mu.Lock()
					p.draw()
					p.mu.Unlock()
				}
			}
		}()
	} else {
		p.mu.Lock()
		p.print()
		p.mu.Unlock()
	}
}

// Add counts n more benchmarks done.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.update()
}

// Shrink takes n benchmarks off the total: work that will not run.
func (p *Progress) Shrink(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = max(p.total-n, p.done)
}

// Status sets what the run is doing now ("round 3/10 current").
func (p *Progress) Status(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = s
	if p.live {
		p.draw()
	}
}

// Finish ends the report with a last line.
func (p *Progress) Finish() {
	p.halt()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = "done"
	if p.live {
		p.draw()
		fmt.Fprintln(p.w)
	} else {
		p.print()
	}
}

// Abort ends a live report without a last line, so that an error message
// starts on a line of its own. It does nothing after Finish.
func (p *Progress) Abort() {
	if p.halt() {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintln(p.w)
	}
}

// halt stops the redrawing of a live report; it reports whether it was
// running.
func (p *Progress) halt() bool {
	if p.stop == nil {
		return false
	}
	close(p.stop)
	p.stopped.Wait()
	p.stop = nil
	return true
}

func (p *Progress) update() {
	if p.live {
		p.draw()
		return
	}
	if p.now().Sub(p.last) >= p.PlainEvery && p.done < p.total {
		p.print() // the last line is Finish's
	}
}

// line is the report without decoration.
func (p *Progress) line() string {
	elapsed := p.now().Sub(p.start)
	s := fmt.Sprintf("%d/%d benchmarks, %s elapsed", p.done, p.total, clock(elapsed))
	if p.done > 0 && p.done < p.total {
		left := time.Duration(float64(elapsed) / float64(p.done) * float64(p.total-p.done))
		s += ", ETA " + clock(left)
	}
	if p.status != "" {
		s += " (" + p.status + ")"
	}
	return s
}

func (p *Progress) print() {
	p.last = p.now()
	fmt.Fprintf(p.w, "regress: %s\n", p.line())
}

func (p *Progress) draw() {
	const width = 24
	fill := 0
	if p.total > 0 {
		fill = min(width, p.done*width/p.total)
	}
	bar := strings.Repeat("█", fill) + strings.Repeat("·", width-fill)
	fmt.Fprintf(p.w, "\r\x1b[K%s %s", bar, p.line())
}

// clock formats d as m:ss (h:mm:ss above an hour).
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

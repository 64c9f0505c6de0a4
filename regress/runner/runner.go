// Package runner runs Go benchmarks the way kernelwatch measures them: from
// compiled test binaries, one process per side and round, and collects their
// output as result files.
//
// Its opinion is that a comparison is only as good as the conditions the two
// sides ran under, so both sides run in one job, interleaved: round k runs the
// baseline then the current side when k is even and the other way round when
// k is odd, starting from a seeded coin flip (ABBA). Drift of the machine over
// the job then lands on both sides alike instead of looking like a change
// (anchors: comparing with samples stored from another run gives 45–80% false
// alarms; interleaved runs stay at the test's alpha).
//
// Each invocation is `pkg.test -test.run '^$' -test.bench RE -test.count N
// [-test.benchtime D] [-kernels.device D] [pass-through flags]` in the
// package's directory. The binary lists its top-level benchmarks first
// (-test.list), so a run knows how much work is ahead (progress and ETA), can
// shard deterministically (Shard) and can name exactly which top-level
// benchmarks to run.
//
// A suite may instead be a command (CommandSuite; command.go): any program,
// run in the same interleaved rounds, that prints its results or writes them
// to a file. It cannot be listed, so it is one job per side and lane, and
// its benchmarks are what it prints that the filter and the shard keep.
//
// A run can stop early and keep what it measured: a round does not start
// when the longest round so far would not finish before Plan.Deadline, and a
// cancelled context (Ctrl-C, a CI job's SIGTERM) stops the processes under
// way. Either way the rounds that finished on both sides are kept and the
// unfinished one is dropped, since a round holds one sample per side: the
// two sides stay paired sample for sample.
//
// The processes run with this process's environment less every variable
// that may hold a credential (ChildEnv): the code under test may be a
// fork's.
//
// A benchmark that fails (go test's "--- FAIL: BenchmarkX") is reported as a
// Failure and the invocation's other results are kept. A process that dies
// (a panic, a fatal error, os.Exit) is attributed to the benchmark that was
// running — the name go test printed without a result, or the Benchmark
// function on the crashing goroutine's stack — which fails as a whole; the
// rest of the invocation's benchmarks are run again in a new process, and
// later rounds skip the crashed benchmark on that side. A process that dies
// outside any benchmark is an error: nothing it printed can be trusted.
package runner

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DeviceFlag is the flag through which a suite's test binary takes the
// backend to run on (the harness's -kernels.device). It is passed only to
// binaries that define it.
const DeviceFlag = "kernels.device"

// Side is one version of the code under test: its test binaries.
type Side struct {
	Name     string // "baseline", "current", or "run"
	Binaries []Binary
}

// Lane is one concurrent stream of invocations: its own shard of the
// benchmarks and its own environment (CUDA_VISIBLE_DEVICES=k for GPU k).
type Lane struct {
	Name  string   // for messages, e.g. "gpu 1"
	Env   []string // added to the environment of every invocation
	Shard Shard
}

// Plan says what to run.
type Plan struct {
	Filter    *Filter // nil selects everything
	Benchtime string  // "" leaves go test's default
	Count     int     // -test.count of each invocation; ≥ 1
	Rounds    int     // invocations per side, binary and lane; ≥ 1
	Seed      uint64  // picks which side the first round starts with
	// Device is passed as -kernels.device to binaries that define that
	// flag; "" passes nothing.
	Device string
	// Args are passed to every invocation after regress's own flags (go
	// test flags already rewritten with TestFlags).
	Args []string
	// Lanes run concurrently; none means one lane with no extra
	// environment and the whole suite.
	Lanes []Lane
	// Progress, when not nil, is told about every finished benchmark.
	Progress *Progress
	// Weights are what each top-level benchmark (BenchmarkX) costs to run,
	// in any unit, for dealing Dealt lanes: with weights, the benchmarks go
	// heaviest first to the lane with the least weight so far (a benchmark
	// without a weight counts as the mean of the others); without, every
	// N-th benchmark goes to the same lane.
	Weights map[string]float64
	// Deadline, when not zero, is when the run must be over: a lane starts
	// a round only if its longest round so far would finish before it
	// (the first round, only if the deadline has not passed, or if
	// Longest would: see Longest).
	Deadline time.Time
	// FirstRound numbers the first of the Rounds rounds, for a run that
	// continues an earlier one (regress check's extra rounds of the
	// benchmarks that cannot yet detect their threshold): its "round: k"
	// lines go on from there, and so does the ABBA order, round k running
	// the sides in the order round k of one longer run would.
	FirstRound int
	// Longest is what a round is expected to take before one has run (from
	// the rounds of an earlier run): the deadline starts no first round
	// that would not finish before it.
	Longest time.Duration
}

// Why a run stopped before all its rounds (Result.Stopped).
const (
	StopDeadline = "deadline" // Plan.Deadline
	StopSignal   = "signal"   // the context was cancelled
)

// Failure is a benchmark that failed on one side.
type Failure struct {
	Side string
	Pkg  string
	// Name is the benchmark name without "Benchmark" and the -N suffix;
	// for a crash, the top-level benchmark.
	Name    string
	Message string
	// Times counts the invocations it failed in.
	Times int
}

// Output is what one side produced.
type Output struct {
	Side string
	// Results is the result text: configuration, Unit and benchmark lines
	// of every invocation, each invocation preceded by a "round: k" line
	// when there are several rounds or sides, and each lane by "shard: i/n"
	// when the run is sharded, or by "lane: i/n" when it deals the
	// benchmarks over several lanes (--gpus).
	Results []byte
	// Failures in the order they first happened.
	Failures []Failure
	// Benchmarks counts the top-level benchmarks selected on this side
	// (for a suite command: that it printed and the filter and shard
	// kept).
	Benchmarks int
	// Warnings are problems that did not stop the run (what converting a
	// suite command's results found), each once.
	Warnings []string
}

// Result is a finished run.
type Result struct {
	Sides []Output // in the order of the sides given to Run
	// FirstSide is the side that ran first in round 0.
	FirstSide string
	// Invocations counts the test binary processes run. InvocationTime is
	// their summed wall time — what go test itself would have taken to run
	// them — along the busiest lane (lanes run at the same time): the rest
	// of a run's time is regress's own overhead.
	Invocations    int
	InvocationTime time.Duration
	// Costs says where the invocations' time went (summed over lanes).
	Costs Costs
	// Rounds is the number of rounds that finished in every lane: the
	// plan's, unless the run stopped early (Stopped). A lane that went on
	// longer keeps its further rounds too.
	Rounds int
	// Stopped is StopDeadline or StopSignal when Rounds is short of the
	// plan's, else "".
	Stopped string
	// Deal fingerprints how Dealt lanes split the benchmarks (DealPrint): "cost "
	// and 16 hex digits of an FNV-1a hash over every top-level benchmark
	// listed on either side with the lane it went to, in sorted order. Two
	// runs with the same Deal split the same benchmarks the same way. ""
	// when no lane is dealt.
	Deal string
}

// List returns the top-level benchmarks (BenchmarkX) of bin that filter
// selects, in source order. It runs the binary with -test.list, which
// starts TestMain but runs nothing.
func List(ctx context.Context, bin Binary, filter *Filter, device string, env []string) ([]string, error) {
	if filter == nil {
		filter, _ = ParseFilter("")
	}
	inv := &invoker{device: device}
	names, err := inv.list(ctx, bin, filter, env)
	return names, err
}

// invoker runs test binaries; it remembers which binaries lack the device
// flag.
type invoker struct {
	device   string
	mu       sync.Mutex
	noDevice map[string]bool
	count    int
}

func (inv *invoker) deviceArgs(bin Binary) []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.device == "" || inv.noDevice[bin.Path] {
		return nil
	}
	return []string{"-" + DeviceFlag + "=" + inv.device}
}

func (inv *invoker) list(ctx context.Context, bin Binary, filter *Filter, env []string) ([]string, error) {
	for {
		dev := inv.deviceArgs(bin)
		args := append([]string{"-test.list=" + filter.Top()}, dev...)
		cmd := command(ctx, bin.Path, args...)
		cmd.Dir = bin.Dir
		cmd.Env = ChildEnv(env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil && dev != nil && strings.Contains(stderr.String(), "flag provided but not defined: -"+DeviceFlag) {
			inv.mu.Lock()
			if inv.noDevice == nil {
				inv.noDevice = map[string]bool{}
			}
			inv.noDevice[bin.Path] = true
			inv.mu.Unlock()
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: listing benchmarks: %v: %s", binName(bin), err, lastLines(stderr.String()+stdout.String(), 3))
		}
		var names []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "Benchmark") && filter.MatchTop(l) {
				names = append(names, l)
			}
		}
		return names, nil
	}
}

func binName(b Binary) string {
	if b.Command != nil {
		return CommandName(b.Command)
	}
	if b.Pkg != "" {
		return b.Pkg
	}
	return b.Path
}

// job is what one lane runs for one side and binary.
type job struct {
	side     int
	sideName string
	bin      Binary
	tops     []string        // selected top-level benchmarks, in source order; none for a command
	crashed  map[string]bool // top-level benchmarks that crashed on this side
	seen     map[string]bool // a command's top-level benchmarks kept so far
	warnings []string
}

func (j *job) warn(w string) {
	if !slices.Contains(j.warnings, w) {
		j.warnings = append(j.warnings, w)
	}
}

// laneState is one lane's work and output.
type laneState struct {
	lane    Lane
	jobs    []*job
	out     []bytes.Buffer // per side
	elapsed time.Duration  // summed wall time of its invocations
	costs   Costs          // where its invocations' time went
	rounds  int            // rounds finished on every side
	kept    []int          // per side: length of out at the end of the last finished round
	shardBy string         // a shard of a run split over machines: how ("name" or Result.Deal)
}

// Run runs the sides (one or two) as plan says and returns their output. On
// error (a binary that cannot be listed, a process that dies outside any
// benchmark, a cancelled ctx) every running process is killed and Run
// returns the error; the caller removes its temporary files. When the error
// is ctx's own (the run was interrupted) and every lane finished at least
// one round, Run also returns a Result that holds the rounds that finished,
// with Stopped set to StopSignal: a caller that can use part of a run does,
// the others see only the error. A run stopped by Plan.Deadline is not an
// error.
func Run(ctx context.Context, sides []Side, plan Plan) (*Result, error) {
	if len(sides) == 0 || len(sides) > 2 {
		return nil, errors.New("runner: want one or two sides")
	}
	if plan.Filter == nil {
		plan.Filter, _ = ParseFilter("")
	}
	plan.Count = max(plan.Count, 1)
	plan.Rounds = max(plan.Rounds, 1)
	lanes := plan.Lanes
	if len(lanes) == 0 {
		lanes = []Lane{{}}
	}
	inv := &invoker{device: plan.Device}

	// List every binary once (in the first lane's environment) and shard.
	res := &Result{Sides: make([]Output, len(sides))}
	listed := make([][][]string, len(sides))
	for i, s := range sides {
		res.Sides[i].Side = s.Name
		for _, b := range s.Binaries {
			if b.Command != nil {
				listed[i] = append(listed[i], nil) // a command says what it runs by running
				continue
			}
			names, err := inv.list(ctx, b, plan.Filter, lanes[0].Env)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			listed[i] = append(listed[i], names)
		}
	}
	// Dealt shards split the union of the sides' lists, so a benchmark runs
	// in the same lane on both sides.
	var union []string
	seen := map[string]bool{}
	for i, s := range sides {
		for j, b := range s.Binaries {
			for _, n := range listed[i][j] {
				if key := b.Pkg + "\x00" + n; !seen[key] {
					seen[key] = true
					union = append(union, key)
				}
			}
		}
	}
	dealt := map[int]map[string]int{} // by lane count: benchmark → lane (0-based)
	for _, lane := range lanes {
		if sh := lane.Shard; sh.Dealt && sh.N > 1 && dealt[sh.N] == nil {
			dealt[sh.N] = DealTops(union, sh.N, plan.Weights)
			res.Deal = DealPrint(dealt[sh.N])
		}
	}
	inShard := func(sh Shard, pkg, name string) bool {
		if sh.Dealt && sh.N > 1 {
			return dealt[sh.N][pkg+"\x00"+name] == sh.I-1
		}
		return sh.Has(name)
	}
	states := make([]*laneState, len(lanes))
	total := 0
	for l, lane := range lanes {
		st := &laneState{lane: lane, out: make([]bytes.Buffer, len(sides))}
		if sh := lane.Shard; sh.N > 1 && (!sh.Dealt || sh.Hosts) {
			st.shardBy = "name"
			if sh.Dealt {
				st.shardBy = DealPrint(dealt[sh.N])
			}
		}
		for i, s := range sides {
			for j, b := range s.Binaries {
				if b.Command != nil {
					st.jobs = append(st.jobs, &job{side: i, sideName: s.Name, bin: b, seen: map[string]bool{}})
					total += plan.Rounds * plan.Count
					continue
				}
				var tops []string
				for _, n := range listed[i][j] {
					if inShard(lane.Shard, b.Pkg, n) {
						tops = append(tops, n)
					}
				}
				res.Sides[i].Benchmarks += len(tops)
				if len(tops) > 0 {
					st.jobs = append(st.jobs, &job{side: i, sideName: s.Name, bin: b, tops: tops, crashed: map[string]bool{}})
					total += len(tops) * plan.Rounds * plan.Count
				}
			}
		}
		states[l] = st
	}
	if plan.Progress != nil {
		plan.Progress.Start(total)
		defer plan.Progress.Abort()
	}

	swap := SecondFirst(plan.Seed)
	res.FirstSide = sides[0].Name
	if swap && len(sides) == 2 {
		res.FirstSide = sides[1].Name
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		failures = make([]map[string]*Failure, len(sides))
		order    = make([][]string, len(sides))
	)
	for i := range failures {
		failures[i] = map[string]*Failure{}
	}
	record := func(side int, f Failure) {
		mu.Lock()
		defer mu.Unlock()
		key := f.Pkg + "\x00" + f.Name
		if old := failures[side][key]; old != nil {
			old.Times++
			return
		}
		f.Times = 1
		failures[side][key] = &f
		order[side] = append(order[side], key)
	}
	for _, st := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runLane(ctx, st, sides, plan, swap, inv, record)
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	res.Rounds = plan.Rounds
	for _, st := range states {
		res.Rounds = min(res.Rounds, st.rounds)
	}
	if res.Rounds < plan.Rounds {
		res.Stopped = StopDeadline
	}
	if firstErr != nil {
		if parent.Err() == nil || res.Rounds == 0 {
			return nil, firstErr
		}
		res.Stopped = StopSignal
	} else if plan.Progress != nil {
		plan.Progress.Finish()
	}
	for _, st := range states {
		for _, j := range st.jobs {
			if j.bin.Command != nil {
				out := &res.Sides[j.side]
				out.Benchmarks += len(j.seen)
				for _, w := range j.warnings {
					if !slices.Contains(out.Warnings, w) {
						out.Warnings = append(out.Warnings, w)
					}
				}
			}
		}
	}
	for i := range sides {
		parts := make([][]byte, len(states))
		for l, st := range states {
			// An unfinished round is dropped: the sides stay paired.
			parts[l] = st.out[i].Bytes()[:st.kept[i]]
		}
		var buf bytes.Buffer
		Concat(&buf, parts...)
		res.Sides[i].Results = buf.Bytes()
		for _, k := range order[i] {
			f := failures[i][k]
			f.Side = sides[i].Name
			res.Sides[i].Failures = append(res.Sides[i].Failures, *f)
		}
	}
	res.Invocations = inv.count
	for _, st := range states {
		res.InvocationTime = max(res.InvocationTime, st.elapsed)
		res.Costs.Merge(st.costs)
	}
	return res, firstErr
}

// DealTops deals the top-level benchmarks keys ("pkg\x00BenchmarkX", as
// Run lists them over both sides) over n lanes by Deal, each weighing what
// weights gives its BenchmarkX.
func DealTops(keys []string, n int, weights map[string]float64) map[string]int {
	return Deal(keys, n, func(key string) (float64, bool) {
		_, top, _ := strings.Cut(key, "\x00")
		w, ok := weights[top]
		return w, ok
	})
}

// DealPrint is Result.Deal of a deal: "cost" and its fingerprint.
func DealPrint(deal map[string]int) string {
	keys := slices.Sorted(maps.Keys(deal))
	h := fnv.New64a()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%d\n", k, deal[k])
	}
	return fmt.Sprintf("cost %016x", h.Sum64())
}

// Deal assigns each of names to one of n lanes (0-based). With weights (weight
// reports a name's weight and whether it has one), it balances the summed
// weight per lane: heaviest first, each to the lane with the least weight so
// far, ties to the lower lane and to the earlier name; a name without a
// weight counts as the mean of the others. Without any weight, name i goes to
// lane i mod n.
func Deal(names []string, n int, weight func(string) (float64, bool)) map[string]int {
	out := make(map[string]int, len(names))
	w := make([]float64, len(names))
	sum, known := 0.0, 0
	for i, name := range names {
		if v, ok := weight(name); ok && v >= 0 {
			w[i], sum, known = v, sum+v, known+1
		} else {
			w[i] = -1
		}
	}
	if known == 0 {
		for i, name := range names {
			out[name] = i % n
		}
		return out
	}
	for i := range w {
		if w[i] < 0 {
			w[i] = sum / float64(known)
		}
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w[b], w[a]) })
	load := make([]float64, n)
	for _, i := range order {
		lane := 0
		for l := range load {
			if load[l] < load[lane] {
				lane = l
			}
		}
		out[names[i]] = lane
		load[lane] += w[i]
	}
	return out
}

// SecondFirst reports whether, with this seed, round 0 runs the second
// side first (the coin flip that starts the ABBA order).
func SecondFirst(seed uint64) bool {
	return rand.New(rand.NewPCG(seed, 0x6b77)).IntN(2) == 1
}

// runLane runs one lane's rounds, until the last or until the next would
// not finish before plan.Deadline.
func runLane(ctx context.Context, st *laneState, sides []Side, plan Plan, swap bool, inv *invoker, record func(int, Failure)) error {
	roundLines := plan.Rounds > 1 || len(sides) > 1 || plan.FirstRound > 0
	st.kept = make([]int, len(sides))
	for i := range sides {
		if sh := st.lane.Shard; sh.N > 1 {
			key := "shard"
			if sh.Dealt && !sh.Hosts {
				key = "lane"
			}
			fmt.Fprintf(&st.out[i], "%s: %s\n", key, sh)
			if st.shardBy != "" {
				fmt.Fprintf(&st.out[i], "shard-by: %s\n", st.shardBy)
			}
		}
		st.kept[i] = st.out[i].Len()
	}
	longest := plan.Longest
	for i := 0; i < plan.Rounds; i++ {
		round := plan.FirstRound + i
		start := time.Now()
		if !plan.Deadline.IsZero() && start.Add(longest).After(plan.Deadline) {
			return nil
		}
		order := []int{0}
		if len(sides) == 2 {
			order = []int{0, 1}
			if (round%2 == 1) != swap {
				order = []int{1, 0}
			}
		}
		for _, side := range order {
			for _, j := range st.jobs {
				if j.side != side {
					continue
				}
				if plan.Progress != nil {
					status := sides[side].Name
					if plan.Rounds > 1 || plan.FirstRound > 0 {
						status = fmt.Sprintf("round %d/%d %s", round+1, plan.FirstRound+plan.Rounds, status)
					}
					if st.lane.Name != "" {
						status = st.lane.Name + ": " + status
					}
					plan.Progress.Status(status)
				}
				if roundLines {
					fmt.Fprintf(&st.out[side], "round: %d\n", round)
				}
				if err := runJob(ctx, j, plan, round, st, inv, &st.out[side], func(f Failure) {
					f.Side = sides[side].Name
					record(side, f)
				}); err != nil {
					return fmt.Errorf("%s: %w", sides[side].Name, err)
				}
			}
		}
		st.rounds++
		for i := range sides {
			st.kept[i] = st.out[i].Len()
		}
		longest = max(longest, time.Since(start))
	}
	return nil
}

// runJob runs one binary's selected benchmarks once in round (numbered
// from plan.FirstRound), in one invocation or more after a crash, appending
// the results to out.
func runJob(ctx context.Context, j *job, plan Plan, round int, st *laneState, inv *invoker, out *bytes.Buffer, fail func(Failure)) error {
	if j.bin.Command != nil {
		sc, err := inv.runCommand(ctx, j, plan, round, st.lane)
		if err != nil {
			return err
		}
		st.elapsed += sc.elapsed
		st.costs.add(sc.elapsed, sc.total, sc.costs, sc.costsOK)
		out.Write(sc.out.Bytes())
		for _, f := range deepest(sc.fails) {
			msg := f.msg
			if msg == "" {
				msg = "failed"
			}
			fail(Failure{Name: f.name, Message: msg})
		}
		if plan.Progress != nil {
			plan.Progress.Add(plan.Count)
		}
		return nil
	}
	var tops []string
	for _, t := range j.tops {
		if !j.crashed[t] {
			tops = append(tops, t)
		}
	}
	for len(tops) > 0 {
		bench := plan.Filter.Restrict(tops)
		sc, err := inv.run(ctx, j.bin, bench, plan, st.lane.Env, tops)
		if err != nil {
			return err
		}
		st.elapsed += sc.elapsed
		st.costs.add(sc.elapsed, sc.total, sc.costs, sc.costsOK)
		out.Write(sc.out.Bytes())
		for _, f := range deepest(sc.fails) {
			msg := f.msg
			if msg == "" {
				msg = "failed"
			}
			fail(Failure{Pkg: j.bin.Pkg, Name: f.name, Message: msg})
		}
		if sc.crashTop == "" {
			return nil
		}
		// The process died in crashTop: it fails as a whole on this side,
		// and the benchmarks after it run again in a new process.
		j.crashed[sc.crashTop] = true
		fail(Failure{Pkg: j.bin.Pkg, Name: trimName(sc.crashTop), Message: sc.crashMsg})
		if plan.Progress != nil {
			// Its later rounds on this side will not run.
			plan.Progress.Shrink(plan.Count * (plan.FirstRound + plan.Rounds - 1 - round))
		}
		tops = tops[slices.Index(tops, sc.crashTop)+1:]
	}
	return nil
}

// command is exec.CommandContext, but a cancelled ctx interrupts the
// process (SIGINT, as Ctrl-C would, so the go command stops its compilers
// too) and kills it only if it is still there 5 seconds later.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// invocation is the outcome of one process.
type invocation struct {
	*scan
	crashTop, crashMsg string
	elapsed            time.Duration
}

// run runs bin once on the benchmarks that bench selects (tops, for
// progress and crash attribution).
func (inv *invoker) run(ctx context.Context, bin Binary, bench string, plan Plan, env, tops []string) (*invocation, error) {
	args := []string{"-test.run=^$", "-test.bench=" + bench, "-test.count=" + strconv.Itoa(plan.Count)}
	if plan.Benchtime != "" {
		args = append(args, "-test.benchtime="+plan.Benchtime)
	}
	args = append(args, inv.deviceArgs(bin)...)
	args = append(args, plan.Args...)
	cmd := command(ctx, bin.Path, args...)
	cmd.Dir = bin.Dir
	cmd.Env = ChildEnv(env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr

	// Progress: a top-level benchmark is done when a later one reports
	// its first result, or when the process ends.
	done := map[string]bool{}
	cur := ""
	finish := func(top string) {
		if top != "" && !done[top] {
			done[top] = true
			if plan.Progress != nil {
				plan.Progress.Add(plan.Count)
			}
		}
	}
	sc := &invocation{scan: &scan{}}
	sc.onResult = func(top string) {
		if top != cur {
			finish(cur)
			cur = top
		}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", binName(bin), err)
	}
	rd := bufio.NewReaderSize(stdout, 64<<10)
	for {
		l, err := rd.ReadString('\n')
		if err != nil {
			sc.end(l)
			break
		}
		sc.line(strings.TrimSuffix(l, "\n"))
	}
	werr := cmd.Wait()
	sc.elapsed = time.Since(start)
	inv.mu.Lock()
	inv.count++
	inv.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if werr != nil {
		var exit *exec.ExitError
		if !errors.As(werr, &exit) {
			return nil, fmt.Errorf("%s: %w", binName(bin), werr)
		}
		msg, frame := crashInfo(stderr.String())
		crashed := sc.partial != "" || msg != "" || exit.ExitCode() < 0 || len(sc.fails) == 0
		if crashed {
			top := frame
			leaf := ""
			if sc.partial != "" {
				leaf = trimName(sc.partial)
				t, _, _ := strings.Cut(leaf, "/")
				top = "Benchmark" + t
			}
			if top == "" || !slices.Contains(tops, top) {
				return nil, fmt.Errorf("%s: test binary failed outside any benchmark (%v): %s", binName(bin), werr, lastLines(stderr.String(), 3))
			}
			if msg == "" {
				msg = werr.Error()
				if l := lastLines(stderr.String(), 1); l != "" {
					msg += ": " + l
				}
			}
			where := trimName(top)
			if leaf != "" {
				where = leaf
			}
			sc.crashTop = top
			sc.crashMsg = "process died in " + where + ": " + msg
		}
	}
	// Whatever was selected is now done or will not run in this process.
	finish(cur)
	for _, t := range tops {
		if t == sc.crashTop {
			finish(t)
			break
		}
		finish(t)
	}
	return sc, nil
}

// tailBuffer keeps the first and the last 32 KiB written to it: the
// start of a panic and the end of its goroutine dump.
type tailBuffer struct {
	head, tail []byte
	cut        bool
}

const tailKeep = 32 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := tailKeep - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailKeep {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailKeep:]...)
		t.cut = true
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	if t.cut {
		return string(t.head) + "\n...\n" + string(t.tail)
	}
	return string(t.head) + string(t.tail)
}

// Concat writes result files one after another so that each keeps exactly
// its own configuration: benchfmt carries a configuration line over to
// every later result, so before each part every key set by an earlier part
// is cleared (a "key:" line with no value, which benchfmt reads as a
// deletion).
func Concat(w io.Writer, parts ...[]byte) error {
	set := map[string]bool{}
	var keys []string
	bw := bufio.NewWriter(w)
	for i, p := range parts {
		if i > 0 && len(keys) > 0 {
			for _, k := range keys {
				fmt.Fprintf(bw, "%s:\n", k)
			}
		}
		bw.Write(p)
		if len(p) > 0 && p[len(p)-1] != '\n' {
			bw.WriteByte('\n')
		}
		for _, l := range strings.Split(string(p), "\n") {
			if k := configKey(l); k != "" && !set[k] {
				set[k] = true
				keys = append(keys, k)
			}
		}
	}
	return bw.Flush()
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/convert"
)

// A suite command (benchmarks.yaml's suite.command) takes the place of the
// test binaries: any program — a pytest run, a C++ Google Benchmark or
// nvbench binary, a script — run once per side, round and lane in the side's
// checkout, interleaved exactly like test binaries. It cannot be listed
// before it runs, so the run learns its benchmarks from what it prints.
//
// It prints its results on standard output, or writes them to the file
// $KERNELWATCH_OUT (which then wins), in Go benchmark format or in the
// format suite.format names, which regress/convert reads. The environment
// tells it what to run, so that it can skip work; regress keeps only the
// results that the --bench regexp and the shard select, whether or not the
// command looked:
//
//	KERNELWATCH_SIDE       baseline or current (current for regress run)
//	KERNELWATCH_ROUND      the round, from 0 (the "round: k" of the results)
//	KERNELWATCH_ROUNDS     rounds planned (for regress check's further
//	                       rounds, up to the last of this run of them)
//	KERNELWATCH_SEED       the seed of the ABBA order
//	KERNELWATCH_COUNT      samples per benchmark wanted from this process
//	KERNELWATCH_BENCH      the --bench regexp, as go test -bench takes it
//	KERNELWATCH_BENCHTIME  --benchtime, when set
//	KERNELWATCH_SHARD      i/n, when sharded (a hash of the top-level name decides)
//	KERNELWATCH_DEVICE     cpu or cuda, when --device names one
//	KERNELWATCH_OUT        a path in a fresh temporary directory
//
// An argument may name them too: ${KERNELWATCH_OUT} in suite.command is
// replaced by the value (only these variables are expanded; there is no
// shell). Its environment is regress's own without the variables whose
// names say they hold a secret (TOKEN, SECRET, PASSWORD), plus the lane's
// (CUDA_VISIBLE_DEVICES with --gpus) and the above. It runs in a process
// group of its own, which is interrupted when the run is and killed when
// the command exits: nothing it started outlives it.
//
// A command that exits non-zero, or that prints no benchmark result, is an
// error naming the side and round: a suite that stops measuring must not
// look like a suite with nothing to say. A benchmark it reports as failed
// (a "--- FAIL: BenchmarkX" line, or a Google Benchmark error) is a Failure,
// as from go test.
const (
	EnvSide      = "KERNELWATCH_SIDE"
	EnvRound     = "KERNELWATCH_ROUND"
	EnvRounds    = "KERNELWATCH_ROUNDS"
	EnvSeed      = "KERNELWATCH_SEED"
	EnvCount     = "KERNELWATCH_COUNT"
	EnvBench     = "KERNELWATCH_BENCH"
	EnvBenchtime = "KERNELWATCH_BENCHTIME"
	EnvShard     = "KERNELWATCH_SHARD"
	EnvDevice    = "KERNELWATCH_DEVICE"
	EnvOut       = "KERNELWATCH_OUT"
)

// maxCommandOutput bounds what one invocation may print.
const maxCommandOutput = 1 << 30

// CommandName is a suite command for messages: its argv, quoted where an
// argument has spaces.
func CommandName(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = a
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			parts[i] = strconv.Quote(a)
		}
	}
	return "suite.command [" + strings.Join(parts, " ") + "]"
}

// runCommand runs j's command once for round, filters and converts what it
// printed, and returns it scanned like a test binary's output.
func (inv *invoker) runCommand(ctx context.Context, j *job, plan Plan, round int, lane Lane) (*invocation, error) {
	bin := j.bin
	where := fmt.Sprintf("round %d of %d (%s=%d)", round+1, plan.FirstRound+plan.Rounds, EnvRound, round)
	tmp, err := os.MkdirTemp("", "regress-command-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	outFile := filepath.Join(tmp, "results.txt")
	if bin.Format != "" && bin.Format != "go" {
		outFile = filepath.Join(tmp, "results.json")
	}
	vars := [][2]string{
		{EnvSide, j.sideName},
		{EnvRound, strconv.Itoa(round)},
		{EnvRounds, strconv.Itoa(plan.FirstRound + plan.Rounds)},
		{EnvSeed, strconv.FormatUint(plan.Seed, 10)},
		{EnvCount, strconv.Itoa(plan.Count)},
		{EnvBench, plan.Filter.String()},
		{EnvBenchtime, plan.Benchtime},
		{EnvShard, ""},
		{EnvDevice, plan.Device},
		{EnvOut, outFile},
	}
	if sh := lane.Shard; sh.N > 1 {
		vars[7][1] = sh.String()
	}
	env := ChildEnv(lane.Env...)
	var expand []string
	for _, kv := range vars {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
		expand = append(expand, "${"+kv[0]+"}", kv[1])
	}
	rep := strings.NewReplacer(expand...)
	argv := make([]string, 0, len(bin.Command)+len(plan.Args))
	for _, a := range bin.Command {
		argv = append(argv, rep.Replace(a))
	}
	argv = append(argv, plan.Args...)
	name := CommandName(bin.Command)

	cmd := command(ctx, argv[0], argv[1:]...)
	cmd.Dir = bin.Dir
	cmd.Env = env
	killGroup := ownProcessGroup(cmd)
	var stdout limitedBuffer
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	killGroup() // what the command left running dies with it
	if errors.Is(err, exec.ErrWaitDelay) {
		// It exited, but something it started held its output open
		// (and has just been killed): what it printed is complete.
		err = nil
	}
	inv.mu.Lock()
	inv.count++
	inv.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			msg := lastLines(stderr.String(), 3)
			if msg == "" {
				msg = lastLines(stdout.String(), 3)
			}
			if msg != "" {
				msg = ": " + msg
			}
			return nil, fmt.Errorf("%s: %s exited with %v%s", where, name, exit, msg)
		}
		return nil, fmt.Errorf("%s: %s: %w", where, name, err)
	}
	if stdout.cut {
		return nil, fmt.Errorf("%s: %s printed more than %d MiB", where, name, maxCommandOutput>>20)
	}
	data, source := stdout.Bytes(), "its standard output"
	if fi, err := os.Stat(outFile); err == nil && fi.Size() > 0 {
		if data, err = os.ReadFile(outFile); err != nil {
			return nil, fmt.Errorf("%s: %s: reading %s: %w", where, name, EnvOut, err)
		}
		source = "$" + EnvOut
	}
	if bin.Format != "" && bin.Format != "go" {
		res, err := convert.Convert(bin.Format, data, source, convert.Options{Dir: tmp})
		if err != nil {
			return nil, fmt.Errorf("%s: %s, suite.format %s: %w", where, name, bin.Format, err)
		}
		for _, w := range res.Warnings {
			j.warn(fmt.Sprintf("%s: %s", name, w))
		}
		data = res.Text
	}
	sc := &invocation{scan: &scan{}, elapsed: elapsed}
	printed := 0
	keep := func(full string) bool {
		top, _, _ := strings.Cut(trimName(full), "/")
		return plan.Filter.Match(full) && lane.Shard.Has("Benchmark"+top)
	}
	inFail, keepFail := false, false
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if inFail && strings.HasPrefix(l, "    ") {
			if keepFail {
				sc.line(l)
			}
			continue
		}
		inFail = false
		switch {
		case strings.HasPrefix(l, "--- FAIL: Benchmark"):
			full := strings.TrimSpace(strings.TrimPrefix(l, "--- FAIL: "))
			if i := strings.Index(full, " ("); i >= 0 {
				full = full[:i]
			}
			printed++
			inFail, keepFail = true, keep(full)
			if keepFail {
				sc.line(l)
				top, _, _ := strings.Cut(trimName(full), "/")
				j.seen["Benchmark"+top] = true
			}
		case strings.HasPrefix(l, "Benchmark"):
			full, ok := resultName(l)
			if !ok {
				continue
			}
			printed++
			if keep(full) {
				sc.line(l)
				top, _, _ := strings.Cut(trimName(full), "/")
				j.seen["Benchmark"+top] = true
			}
		default:
			sc.line(l)
		}
	}
	if printed == 0 {
		msg := lastLines(stderr.String(), 3)
		if msg != "" {
			msg = " (its standard error ends: " + msg + ")"
		}
		return nil, fmt.Errorf("%s: %s printed no benchmark results on %s%s", where, name, source, msg)
	}
	return sc, nil
}

// limitedBuffer keeps up to maxCommandOutput bytes and notes whether more
// came.
type limitedBuffer struct {
	bytes.Buffer
	cut bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxCommandOutput - b.Len(); len(p) > room {
		b.cut = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

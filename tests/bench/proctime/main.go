// Command proctime times whole runs of a command with its standard input read from a file, the
// way kustomize and kpt start an exec function: no shell in between (hyperfine 1.15, the version
// Debian ships, can only redirect input through a shell, which adds its own start-up).
//
//	proctime -runs 300 -warmup 20 -input rl.yaml -- bin/minicluster-fn
//
// prints one line of milliseconds (wall: min, median, p90, mean; cpu: median of user+system time)
// and the largest peak RSS of any run in MiB. With -base, every run of COMMAND is paired with a run
// of the base command (in alternating order, so that both see the same load on a shared machine),
// and the line also has the base's figures and the median of the pairs' CPU ratios:
//
//	proctime -runs 100 -input rl.yaml -base "passthroughfn" -base-input rl.yaml -- bin/minicluster-fn
//
// A run that exits non-zero stops it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// sample is one run: wall and CPU time in milliseconds, peak RSS in MiB.
type sample struct{ wall, cpu, rss float64 }

func main() {
	runs := flag.Int("runs", 300, "timed runs")
	warmup := flag.Int("warmup", 20, "untimed runs first")
	input := flag.String("input", "", "file for standard input (default: none)")
	base := flag.String("base", "", "a command (words split on spaces) to pair every run with")
	baseInput := flag.String("base-input", "", "file for the base command's standard input")
	flag.Parse()
	if flag.NArg() == 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: proctime [-runs N] [-warmup N] [-input FILE] [-base CMD [-base-input FILE]] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	var cmdSamples, baseSamples []sample
	for i := range *warmup + *runs {
		s, b, err := runPair(flag.Args(), *input, strings.Fields(*base), *baseInput, i%2 == 1)
		if err != nil {
			fmt.Fprintln(os.Stderr, "proctime:", err)
			os.Exit(1)
		}
		if i >= *warmup {
			cmdSamples = append(cmdSamples, s)
			baseSamples = append(baseSamples, b)
		}
	}
	fmt.Print(summary("", cmdSamples))
	if *base != "" {
		ratios := make([]float64, len(cmdSamples))
		for i := range cmdSamples {
			ratios[i] = cmdSamples[i].cpu / baseSamples[i].cpu
		}
		slices.Sort(ratios)
		fmt.Print(" ", summary("base_", baseSamples))
		fmt.Printf(" cpu_ratio %.3f rss_ratio %.3f", ratios[len(ratios)/2], maxRSS(cmdSamples)/maxRSS(baseSamples))
	}
	fmt.Println()
}

// runPair runs the command and, if there is one, the base command; baseFirst swaps the order.
func runPair(args []string, input string, base []string, baseInput string, baseFirst bool) (sample, sample, error) {
	var s, b sample
	var err error
	if len(base) > 0 && baseFirst {
		if b, err = runOnce(base, baseInput); err != nil {
			return s, b, err
		}
	}
	if s, err = runOnce(args, input); err != nil {
		return s, b, err
	}
	if len(base) > 0 && !baseFirst {
		b, err = runOnce(base, baseInput)
	}
	return s, b, err
}

func summary(prefix string, samples []sample) string {
	wall := make([]float64, len(samples))
	cpu := make([]float64, len(samples))
	var sum float64
	for i, s := range samples {
		wall[i], cpu[i] = s.wall, s.cpu
		sum += s.wall
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	p90 := wall[min(len(wall)-1, (len(wall)*9+9)/10-1)]
	return fmt.Sprintf("%smin %.2f %smedian %.2f %sp90 %.2f %smean %.2f %scpu %.2f %srss %.1f",
		prefix, wall[0], prefix, wall[len(wall)/2], prefix, p90, prefix, sum/float64(len(wall)),
		prefix, cpu[len(cpu)/2], prefix, maxRSS(samples))
}

func maxRSS(samples []sample) float64 {
	var m float64
	for _, s := range samples {
		m = max(m, s.rss)
	}
	return m
}

// runOnce times one run, from start to exit, with output discarded.
func runOnce(args []string, input string) (sample, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if input != "" {
		f, err := os.Open(input)
		if err != nil {
			return sample{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%v: %w", args, err)
	}
	st := cmd.ProcessState
	s := sample{wall: float64(d.Microseconds()) / 1000, cpu: float64((st.UserTime() + st.SystemTime()).Microseconds()) / 1000}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		s.rss = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	return s, nil
}

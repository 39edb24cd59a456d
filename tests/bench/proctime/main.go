// Command proctime times whole runs of a command with its standard input read from a file, the
// way kustomize and kpt start an exec function: no shell in between (hyperfine 1.15, the version
// Debian ships, can only redirect input through a shell, which adds its own start-up).
//
//	proctime -runs 300 -warmup 20 -input rl.yaml -- bin/minicluster-fn
//
// It prints one line: min, median, p90 and mean in milliseconds. A run that exits non-zero stops it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	runs := flag.Int("runs", 300, "timed runs")
	warmup := flag.Int("warmup", 20, "untimed runs first")
	input := flag.String("input", "", "file for standard input (default: none)")
	flag.Parse()
	if flag.NArg() == 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: proctime [-runs N] [-warmup N] [-input FILE] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	var samples []float64
	for i := range *warmup + *runs {
		d, err := runOnce(flag.Args(), *input)
		if err != nil {
			fmt.Fprintln(os.Stderr, "proctime:", err)
			os.Exit(1)
		}
		if i >= *warmup {
			samples = append(samples, float64(d.Microseconds())/1000)
		}
	}
	slices.Sort(samples)
	var sum float64
	for _, s := range samples {
		sum += s
	}
	p90 := samples[min(len(samples)-1, (len(samples)*9+9)/10-1)]
	fmt.Printf("min %.2f median %.2f p90 %.2f mean %.2f\n", samples[0], samples[len(samples)/2], p90, sum/float64(len(samples)))
}

// runOnce times one run, from start to exit, with output discarded.
func runOnce(args []string, input string) (time.Duration, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if input != "" {
		f, err := os.Open(input)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%v: %w", args, err)
	}
	return d, nil
}

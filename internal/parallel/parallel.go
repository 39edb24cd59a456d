// Package parallel runs independent work on every CPU.
package parallel

import (
	"runtime"
	"sync"
)

// Map calls f(0) … f(n-1) on as many goroutines as there are CPUs and returns the results
// in index order, so the output stays deterministic. Generating and writing a thousand
// MiniClusters, or comparing two renders of them, is independent work per MiniCluster.
func Map[T any](n int, f func(i int) T) []T {
	out := make([]T, n)
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			out[i] = f(i)
		}
		return out
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

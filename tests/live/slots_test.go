package live

import (
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Every live test runs side by side with the others (t.Parallel), and at most LIVE_PARALLEL of
// them act on the cluster at once: each takes a slot once what it needs is there (the stand-in
// images, the components beside the cluster, the added nodes) and gives it back when it ends.
// go test's own -parallel bound is set far above that (make live), because it counts a test from
// t.Parallel on: a test waiting for a build ahead (Argo CD's takes minutes on a new machine) would
// hold one of its places and keep a test that needs only the node from running. So in a run whose
// builds are cached every test can start at once; in a cold one the tests of the node run while
// the builds go on.
//
// The tests that are long chains of waits (the GitOps engines', the operator's, a lost node's) take
// their slots ahead of the others: started last, one of them would end the run alone.
var slots = newSlotQueue(liveParallel())

// liveParallel: MINICLUSTER_FN_LIVE_PARALLEL (make live's LIVE_PARALLEL), 4 by default: twice the
// cores of the 2-core VM, since a live test waits most of the time.
func liveParallel() int {
	if n, err := strconv.Atoi(os.Getenv("MINICLUSTER_FN_LIVE_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 4
}

// takeSlot waits for a slot, after the long tests waiting for one, and gives it back at the end of
// t (its subtests included).
func takeSlot(t testing.TB) {
	t.Helper()
	slots.take(t, false)
}

// takeSlotAhead is takeSlot for a long test: it is served before the others that wait.
func takeSlotAhead(t testing.TB) {
	t.Helper()
	slots.take(t, true)
}

// slotQueue is a counting semaphore that serves waiters in two classes, long tests first, each in
// the order they came.
type slotQueue struct {
	mu      sync.Mutex
	changed *sync.Cond
	free    int
	next    uint64   // ticket of the next waiter
	waiting []ticket // in the order they came
}

type ticket struct {
	n     uint64
	ahead bool
}

func newSlotQueue(n int) *slotQueue {
	q := &slotQueue{free: n}
	q.changed = sync.NewCond(&q.mu)
	return q
}

func (q *slotQueue) take(t testing.TB, ahead bool) {
	t.Helper()
	start := time.Now()
	q.mu.Lock()
	me := ticket{n: q.next, ahead: ahead}
	q.next++
	q.waiting = append(q.waiting, me)
	for q.free == 0 || q.waiting[q.served()] != me {
		q.changed.Wait()
	}
	q.waiting = slices.Delete(q.waiting, q.served(), q.served()+1)
	q.free--
	q.changed.Broadcast() // the next in line may find a slot free too
	q.mu.Unlock()
	if waited := time.Since(start); waited >= time.Second {
		t.Logf("waited %.0fs for a slot (%d tests act on the cluster at once)", waited.Seconds(), liveParallel())
	}
	t.Cleanup(func() {
		q.mu.Lock()
		q.free++
		q.changed.Broadcast()
		q.mu.Unlock()
	})
}

// served: the index in q.waiting of the waiter served next: the first long test, else the first.
func (q *slotQueue) served() int {
	for i, w := range q.waiting {
		if w.ahead {
			return i
		}
	}
	return 0
}

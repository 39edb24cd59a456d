package live

import (
	"fmt"
	"sync"
	"time"
)

// brokerMilestones watches a MiniCluster's broker pods in the background and records, from start,
// when all size pods were first seen with their broker container running and when each was first
// seen Ready (its startupProbe, then its readinessProbe: the local broker has joined the
// instance). Polled every 0.5 s, so a figure is late by at most that plus one API call; a pod
// whose Ready window fell between two polls is not counted (hello-world's brokers may finish
// within a few seconds of joining).
type brokerMilestones struct {
	mu         sync.Mutex
	allRunning time.Duration
	firstReady map[string]time.Duration // pod name -> first seen Ready
	stopOnce   sync.Once
	stop       chan struct{}
	done       chan struct{}
}

func watchBrokers(ns, instance string, size int, start time.Time) *brokerMilestones {
	m := &brokerMilestones{firstReady: map[string]time.Duration{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			var l podList
			if err := listObjects(&l, ns, "pods", selector(instance, "broker")); err == nil {
				now := time.Since(start)
				running := 0
				m.mu.Lock()
				for _, p := range l.Items {
					if len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil {
						running++
					}
					if _, seen := m.firstReady[p.Metadata.Name]; p.ready() && !seen {
						m.firstReady[p.Metadata.Name] = now
					}
				}
				if running == size && m.allRunning == 0 {
					m.allRunning = now
				}
				m.mu.Unlock()
			}
			select {
			case <-m.stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return m
}

// finish stops the watch and returns the figures: all running, all seen Ready (0 = not observed),
// and how many pods were seen Ready. It may be called again (a deferred call on failure paths).
func (m *brokerMilestones) finish() (allRunning, allReady time.Duration, seenReady int) {
	m.stopOnce.Do(func() { close(m.stop) })
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.firstReady {
		allReady = max(allReady, d)
	}
	return m.allRunning, allReady, len(m.firstReady)
}

func seconds(d time.Duration) string {
	if d == 0 {
		return "not observed"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

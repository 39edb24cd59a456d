{{- /* broker-state: the local broker's state, asked through its socket. Used by wait.sh. */ -}}
{{define "broker-state" -}}
# broker_state prints the local broker's state (join, quorum, run, ...): the state-machine.get RPC
# through its socket, as flux uptime asks it. Not flux uptime itself: flux 0.88 crashes in it when
# the instance owner has no passwd entry (a runAsUser the image does not know).
broker_state() {
  FLUX_URI={{shq (print "local://" .Pod.Socket)}} flux python -c 'import flux; print(flux.Flux().rpc("state-machine.get").get()["state"])'
}

# broker_wait_run waits up to $1 seconds for the local broker to reach state "run": one
# state-machine.wait RPC, which the broker answers when it gets there. Exit status 0: it runs;
# 2: not yet; 1: no answer (the broker is not listening yet, or has stopped).
broker_wait_run() {
  FLUX_URI={{shq (print "local://" .Pod.Socket)}} flux python -c '
import errno, sys, flux
try:
    flux.Flux().rpc("state-machine.wait").wait_for(float(sys.argv[1])).get()
except OSError as e:
    sys.exit(2 if e.errno == errno.ETIMEDOUT else 1)' "$1"
}
{{- end}}

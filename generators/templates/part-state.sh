{{- /* broker-state: the local broker's state, asked through its socket. Used by ready.sh and wait.sh. */ -}}
{{define "broker-state" -}}
# broker_state prints the local broker's state (join, quorum, run, ...): the state-machine.get RPC
# through its socket, as flux uptime asks it. Not flux uptime itself: flux 0.88 crashes in it when
# the instance owner has no passwd entry (a runAsUser the image does not know).
broker_state() {
  FLUX_URI={{shq (print "local://" .Pod.Socket)}} flux python -c 'import flux; print(flux.Flux().rpc("state-machine.get").get()["state"])'
}
{{- end}}

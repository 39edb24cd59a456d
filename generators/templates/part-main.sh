{{- /* main-broker: how a worker reaches its main broker when the main broker's pod was replaced: main_config, and watch_main for a persistent cluster. Used by wait.sh (a worker's start, run_broker). */ -}}
{{define "main-broker" -}}
# A worker connects to the main broker by its DNS name, which the headless Service publishes for
# every pod of index 0 that exists, ready or not (brokers must find each other while they start).
# When the main broker's node stops answering, its pod stays Terminating there until the Node is
# deleted, while the Job's new pod of index 0 runs elsewhere: the name then resolves to both, and
# flux connects to the first address, which may be the dead one, forever. So a worker starts its
# broker with the address that answers when the name has more than one (main_config), and, in a
# persistent cluster, a worker watches that it stays connected (watch_main).
main_name=""
if [[ -r {{shq .Pod.MainBroker}} ]]; then
  main_name="$(< {{shq .Pod.MainBroker}})"
fi
main_port={{.MainPort}}

# main_addresses prints the addresses main_name resolves to in this pod, once each.
main_addresses() {
  local addr seen=" "
  while read -r addr _; do
    if [[ "${seen}" != *" ${addr} "* ]]; then
      seen+="${addr} "
      echo "${addr}"
    fi
  done < <(getent ahosts "${main_name}" 2> /dev/null)
}

# main_config prints the config directory a worker's broker starts with: the config as it is, or,
# when the main broker's name resolves to more than one address, a copy that names the address
# that answers, once one does. Without getent and timeout in the image, or with the user's own
# broker config, the config as it is.
main_config() {
  local addr config started=${SECONDS} next=0 uri
  local -a addrs
  config="$(< {{shq .Pod.BrokerConfig}})"
  if [[ -z "${main_name}" || "${config}" != *"tcp://${main_name}:${main_port}"* ]] || ! command -v getent > /dev/null || ! command -v timeout > /dev/null; then
    echo "${cfg}"
    return 0
  fi
  while :; do
    mapfile -t addrs < <(main_addresses)
    if ((${#addrs[@]} < 2)); then
      echo "${cfg}"
      return 0
    fi
    for addr in "${addrs[@]}"; do
      if takes_connection "${addr}" "${main_port}"; then
        uri="tcp://${addr}:${main_port}"
        if [[ "${addr}" == *:* ]]; then
          uri="tcp://[${addr}]:${main_port}"
        fi
        mkdir -p {{shq .Pod.MainConfigDir}}
        printf '%s\n' "${config//"tcp://${main_name}:${main_port}"/"${uri}"}" > {{shq (print .Pod.MainConfigDir "/broker.toml")}}
        echo "${host}: the main broker's name ${main_name} resolves to ${addrs[*]}; ${addr} answers: this broker connects there" >&2
        echo {{shq .Pod.MainConfigDir}}
        return 0
      fi
    done
    if ((SECONDS - started >= next)); then
      echo "${host}: the main broker's name ${main_name} resolves to ${addrs[*]:-no address} in this pod, and none takes a connection on port ${main_port} yet: waiting for one that does" >&2
      next=$((SECONDS - started + 60))
    fi
    sleep 1
  done
}
{{- if .Persistent}}

# watch_main runs beside a worker's broker from its start: every 5 s it looks, in the pod's TCP
# table and without starting a process, for the broker's connection to the main broker's port.
# Gone for 10 s while an address of the main broker's name takes a connection: the main broker's
# pod was replaced (the broker's connection to the old one timed out, and flux would keep trying
# the old address), so this broker stops, and the script starts it again to join the new one (the
# lead-returns marker, as when the main broker's pod says so itself). Before this broker has
# joined, no connection is also what a main broker that has not started yet looks like: then it
# acts only when the name resolves to more than one address, the old pod's, Terminating on a node
# that stopped answering, and the Job's new one, as main_config does at a start.
watch_main() {
  local pause port lost=0 addr
  local -a addrs
  if [[ "${index}" == "0" || -z "${main_name}" ]] || ! command -v getent > /dev/null || ! command -v timeout > /dev/null; then
    return 0
  fi
  exec {pause}<> <(:)
  printf -v port '%04X' "${main_port}"
  while :; do
    read -r -t 5 -u "${pause}" _ || :
    if main_connected "${port}"; then
      lost=0
      continue
    fi
    lost=$((lost + 1))
    if ((lost < 2)); then
      continue
    fi
    mapfile -t addrs < <(main_addresses)
    if [[ ! -e {{shq .Pod.Joined}} ]] && ((${#addrs[@]} < 2)); then
      continue
    fi
    for addr in "${addrs[@]}"; do
      if takes_connection "${addr}" "${main_port}"; then
        echo "${host}: this broker has had no connection to the main broker for $((lost * 5 - 5))s, and ${addr} (${main_name}) answers: the main broker's pod was replaced; stopping this broker to join the new one" >&2
        touch {{shq .Pod.LeadReturns}}
        kill -TERM -- "-${broker_pid}" 2> /dev/null || true
        # A broker stopped this way says goodbye to its parent, the main broker that is gone, and
        # waits 60 s for the answer (flux-core's goodbye_timeout) before it exits: after its rc3
        # has had a few seconds, it is killed.
        for _ in 1 2 3 4 5; do
          read -r -t 1 -u "${pause}" _ || :
          kill -0 -- "-${broker_pid}" 2> /dev/null || return 0
        done
        echo "${host}: the broker has not exited 5s after SIGTERM (it waits for its old main broker's goodbye); killing it" >&2
        kill -KILL -- "-${broker_pid}" 2> /dev/null || true
        return 0
      fi
    done
  done
}

# main_connected PORT: whether the pod has an established TCP connection to port PORT (hex, as
# /proc/net/tcp spells it) of another host: the broker's to its main broker.
main_connected() {
  local table remote state
  for table in /proc/net/tcp /proc/net/tcp6; do
    if [[ -r "${table}" ]]; then
      while read -r _ _ remote state _; do
        if [[ "${state}" == "01" && "${remote}" == *":$1" ]]; then
          return 0
        fi
      done < "${table}"
    fi
  done
  return 1
}
{{- end}}
{{- end}}
